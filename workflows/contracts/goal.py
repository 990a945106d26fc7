"""What a goal brings (its data files) and what its run answers, apart from the roles.

Run results and a study's cycles carry these two, so they live apart from the roles'
request and answer contracts (``roles`` re-exports them): reading a run's result does not
build every role's models.
"""

from __future__ import annotations

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from workflows.contracts.base import Model
from workflows.contracts.plan import InputFile

DATA_HEAD_CHARS = 2000


class DataFile(InputFile):
    """A data file given with a goal: pinned by checksum, with its first lines for the planner."""

    head: str = ""
    """The first ``DATA_HEAD_CHARS`` characters if the file is text, else empty."""


class AnswerCite(Model):
    """Where one field of a formatted answer comes from: a task's verified metric."""

    name: str = Field(min_length=1, max_length=100)
    """The field (``mean_age`` of ``@mean_age[34.21]``)."""
    task_id: str = Field(min_length=1, max_length=64)
    metric: str = Field(min_length=1, max_length=200)


class FormattedAnswer(Model):
    """The answer in the format the goal named, and how it holds against the evidence.

    ``problems`` is empty when every field the format names is present, cited, and equal
    (within the format's rounding) to the verified metric it cites.
    """

    format: str
    text: str = ""
    """The answer as the output processor wrote it in the format (``@mean_age[34.21]``)."""
    values: dict[str, str] = Field(default_factory=dict[str, str])
    """Each ``@name[value]`` the text holds."""
    cites: list[AnswerCite] = Field(default_factory=list[AnswerCite])
    problems: list[str] = Field(default_factory=list[str])


class RunAnswer(Model):
    """The output processor's answer to the goal, for the report."""

    answer: str = Field(min_length=1, max_length=4000)
    analysis: str = Field(default="", max_length=12_000)
    caveats: list[str] = Field(default_factory=list[str], max_length=20)
    formatted: SkipJsonSchema[FormattedAnswer | None] = None
    """The answer in the goal's answer format, when it names one (not part of the schema
    the output processor fills: a goal naming no format asks exactly what it always did)."""


class RunAnswerInFormat(RunAnswer):
    """What the output processor fills when the goal names an answer format."""

    in_format: str = Field(min_length=1, max_length=4000)
    """The answer written exactly in the goal's answer format (every ``@name[value]``)."""
    cites: list[AnswerCite] = Field(default_factory=list[AnswerCite], max_length=50)
    """For each field, the task and verified metric its value comes from."""
