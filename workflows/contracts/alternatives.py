"""What a plan or a person writes to ask for alternatives: branches and the metric to rank by.

A branch re-runs one task from a checkpoint with modifications (``workflows.contracts.branches``
has the request and the record). ``set`` targets ``args.NAME`` or
``resources.memory_mb|timeout_s|cpus`` of the branch-point job, or a downstream task's with its
id in front (``4:args.epochs``); ``code`` is a person's code for the branch-point job. Plans
carry these (a decision's ``branches`` explore alternatives from the start), so they depend on
nothing but the base. Pure models only.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from workflows.contracts.base import Scalar, StrictModel

BranchKind = Literal["recovery", "optimisation", "hypothesis", "human"]
Direction = Literal["maximize", "minimize"]
TieRule = Literal["simplest", "cheapest", "person"]
"""How a line is kept among lines whose key metric is tied within its intervals: the fewest
parameters changed (then the earliest line), the lowest cost, or a person's choice
(``workflows.branching.selection``)."""

BranchName = Annotated[str, Field(min_length=1, max_length=48,
                                  pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
FieldPath = Annotated[str, Field(
    min_length=1, max_length=140,
    pattern=r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:)?"
            r"(?:args\.[A-Za-z0-9_-]{1,64}|resources\.(?:memory_mb|timeout_s|cpus))$")]
"""A modification's target: ``args.NAME`` or ``resources.memory_mb|timeout_s|cpus`` of the
branch-point job, or of a downstream task's job with its id in front (``4:args.epochs``)."""

MAX_BRANCHES = 20
"""Most branches one request (a sweep) starts."""
MAX_SETS = 50
"""Most modifications one branch carries."""
CODE_CHARS = 256 * 1024
"""The longest job code a person may give a branch."""
HYPOTHESIS_CHARS = 2000


class Metric(StrictModel):
    """The key metric lines are ranked by, and which way is better."""

    name: str = Field(min_length=1, max_length=128)
    direction: Direction = "maximize"


class BranchSpec(StrictModel):
    """One branch as a plan's ``branches`` or a person's request writes it."""

    name: BranchName
    kind: BranchKind = "human"
    hypothesis: str = Field(default="", max_length=HYPOTHESIS_CHARS)
    set: dict[FieldPath, Scalar] = Field(default_factory=dict[str, Scalar],
                                         max_length=MAX_SETS)
    code: str | None = Field(default=None, min_length=1, max_length=CODE_CHARS)
    """A person's code for the branch-point job (the whole review panel checks it)."""
