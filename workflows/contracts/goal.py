"""What a goal brings (its data files) and what its run answers, apart from the roles.

Run results and a study's cycles carry these two, so they live apart from the roles'
request and answer contracts (``roles`` re-exports them): reading a run's result does not
build every role's models.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.plan import InputFile

DATA_HEAD_CHARS = 2000


class DataFile(InputFile):
    """A data file given with a goal: pinned by checksum, with its first lines for the planner."""

    head: str = ""
    """The first ``DATA_HEAD_CHARS`` characters if the file is text, else empty."""


class RunAnswer(Model):
    """The output processor's answer to the goal, for the report."""

    answer: str = Field(min_length=1, max_length=4000)
    analysis: str = Field(default="", max_length=12_000)
    caveats: list[str] = Field(default_factory=list[str], max_length=20)
