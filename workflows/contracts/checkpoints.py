"""Contracts of named checkpoints: a run's state point, kept under a name a branch starts from.

A person names one of a running run (``assay checkpoint RUN --name before-refit``, the run's
``checkpoint`` update); a task's failure (``error:<task>:<n>``) and a gate's approval
(``approval:<gate>:<task>``) name one by themselves, and so does the run every
``policy.checkpoint_every_min`` minutes (``periodic:<n>``, at the first task to end after each
interval: the run's state changes only as its tasks end). Each records the tasks finished at that
moment and the branch point it stands for; the results and their artifacts stay in the run's
own state, so ``assay branch RUN --from-checkpoint NAME`` starts from what they were then.
Pure models only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from workflows.contracts.base import BY_CHARS, COMMENT_CHARS, Channel, Model, PlainText, StrictModel
from workflows.contracts.branches import CheckpointPhase
from workflows.contracts.execution import TaskStatus
from workflows.contracts.plan import TaskId

CheckpointKind = Literal["manual", "error", "approval", "periodic"]
NAME_CHARS = 64
"""The longest name a person may give a checkpoint."""
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A person's checkpoint name: letters, digits, ``_``, ``.``, ``-`` (``:`` marks the run's own)."""
MAX_NAMED = 50
"""The most checkpoints people may name in one run."""
AUTO_KEPT = 20
"""The latest automatic checkpoints a run keeps of errors and approvals, and apart of periodic
ones; older ones are dropped."""
TASKS_SHOWN = 100
"""The most finished tasks a checkpoint lists (it counts them all and keeps their results)."""
CHECKPOINT_MAX_BYTES = 8_000
"""The largest ``checkpoint`` request a run reads."""


class CheckpointRequest(StrictModel):
    """The payload of a run's ``checkpoint`` update: name the run's state as it is now.

    ``temporal workflow update execute --workflow-id RUN --name checkpoint --input
    '{"name": "before-refit", "by": "ada"}'`` names one.
    """

    name: str = Field(min_length=1, max_length=NAME_CHARS, pattern=NAME_PATTERN)
    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    task: TaskId | None = None
    """The branch point it stands for (default: the first task in order not finished yet)."""
    phase: CheckpointPhase = "planned"
    channel: Channel | None = None
    """How it was sent (``cli``, ``python``; none: ``temporal``)."""


class Checkpoint(Model):
    """A named state point of a run: who named it, when, and what had finished by then."""

    name: str
    kind: CheckpointKind = "manual"
    by: str = ""
    comment: str = ""
    channel: Channel | None = None
    at: datetime
    run_phase: str = ""
    """The run's phase when it was named (``execute``, ``open``)."""
    from_task: str | None = None
    """The branch point a branch from it starts at, unless the branch names another."""
    from_phase: CheckpointPhase = "planned"
    tasks: dict[str, TaskStatus] = Field(default_factory=dict[str, TaskStatus])
    """The tasks finished by then, and how each ended (their results are kept as they were);
    the latest :data:`TASKS_SHOWN` of them."""
    finished: int = 0
    """How many tasks had finished by then."""
    artifacts: int = 0
    """How many verified artifacts those tasks had."""


class CheckpointList(Model):
    """Answer of a run's ``checkpoints`` query, and the report's checkpoint section."""

    run_id: str
    checkpoints: list[Checkpoint] = Field(default_factory=list[Checkpoint])
    """Oldest first: those people named, and the latest automatic ones."""
    dropped: int = 0
    """Automatic checkpoints dropped to keep the latest :data:`AUTO_KEPT`."""
