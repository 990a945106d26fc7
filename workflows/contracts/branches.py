"""Contracts of branches and steering: what a person or a plan asks, and what a branch became.

A *branch* re-runs one task from a checkpoint, with modifications, and everything downstream
of it, as a child workflow of the run (``workflows.branching``); upstream tasks are reused by
reference. A checkpoint is a task and the phase it is entered at:

- ``planned``: the task as the plan has it (implemented, reviewed, run and verified afresh);
- ``execute``: the job the task ran, as reviewed (changed by the branch, reviewed again, run);
- ``verify``: the task's execution itself (its artifacts re-verified, not re-run); only the
  tasks downstream change.

Modifications (``workflows.contracts.alternatives: BranchSpec``) pass the guardrails of
reflection's patches (``workflows.common.guard``), and a person's code the full review panel.
Pure models only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.contracts.alternatives import MAX_BRANCHES, BranchKind, BranchSpec, Metric, TieRule
from workflows.contracts.base import BY_CHARS, COMMENT_CHARS, Channel, Model, PlainText, StrictModel
from workflows.contracts.execution import ExecutionOutcome, TaskStatus
from workflows.contracts.plan import JobSpec, Scalar, TaskId

CheckpointPhase = Literal["planned", "execute", "verify"]
Selection = Literal["best", "keep_all", "person"]
"""How a finished set of sibling branches is decided: the comparator's best line becomes the
run's, every line is kept and the main line stays the run's, or a person chooses at a
``branch`` gate."""
BranchStatus = Literal["running", "completed", "partial", "failed", "cancelled"]
SteerAction = Literal["pause", "resume", "cancel", "close"]

MAIN_LINE = "main"
"""The name the run's own line of work has among its branches (no branch may take it)."""
MAX_RUN_BRANCHES = 100
"""Most branches one run holds; each is a child workflow with a history of its own."""
CHECKPOINT_CHARS = 160
"""The longest checkpoint name, the run's own (``approval:GATE:TASK``) included."""
BRANCH_MAX_BYTES = 1_000_000
"""The largest ``branch`` request a run reads (a sweep of twenty with code fits)."""


class BranchRequest(StrictModel):
    """The payload of a run's ``branch`` signal and ``start_branches`` update.

    ``temporal workflow signal --workflow-id RUN --name branch --input '{"from_task": "3",
    "from_phase": "execute", "by": "ada", "branches": [{"name": "lr-0.1", "set":
    {"args.lr": 0.1}}]}'`` starts one.
    """

    from_task: TaskId
    from_phase: CheckpointPhase = "planned"
    branches: list[BranchSpec] = Field(min_length=1, max_length=MAX_BRANCHES)
    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    metric: Metric | None = None
    """The key metric to compare these branches on (default: the plan's or the task's)."""
    selection: Selection | None = None
    """How to decide among them (default: the run policy's ``branching.selection``)."""
    channel: Channel | None = None
    """How it was sent (``cli``, ``python``; none: ``temporal``)."""
    allow_test_selection: bool = False
    """Compare on a held-out metric (``test_`` or the plan's ``held_out``) all the same."""
    from_checkpoint: str | None = Field(default=None, min_length=1, max_length=CHECKPOINT_CHARS,
                                        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
    """A named checkpoint of the run: the tasks it reuses are as they were when it was named."""


class SteerRequest(StrictModel):
    """The payload of a run's ``steer`` signal: pause, resume, cancel or close it."""

    action: SteerAction
    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    channel: Channel | None = None
    """How it was sent (``cli``, ``python``; none: ``temporal``)."""


class BranchChange(Model):
    """One modification a branch made, as applied (old value from the checkpoint)."""

    task_id: str
    field: str
    old: Scalar | None = None
    new: Scalar | None = None


class LineScore(Model):
    """What the comparator ranks a line of work by (a branch's, or the main line's)."""

    completed: bool = False
    """Every task of the line completed."""
    checks_passed: int = 0
    checks_declared: int = 0
    metric: float | None = None
    """The key metric's value: the branch point's, else the last downstream task's."""
    interval: tuple[float, float] | None = None
    """The key metric's interval, where the task wrote it as an estimate."""
    wall_s: float = 0.0
    cost_usd: float = 0.0
    cpu_s: float = 0.0
    rank: int = 0
    """1 for the best of its siblings (0: not ranked yet)."""


class BranchRecord(Model):
    """A branch as the run knows it: what was asked, how it ran, how it compared."""

    name: str
    kind: BranchKind = "human"
    hypothesis: str = ""
    from_task: str
    from_phase: CheckpointPhase = "planned"
    group: str = ""
    """Its siblings share this (the request that started them): they are compared together."""
    by: str = ""
    comment: str = ""
    channel: Channel | None = None
    changes: list[BranchChange] = Field(default_factory=list[BranchChange])
    code_sha256: str = ""
    workflow_id: str = ""
    checkpoint: str = ""
    """The named checkpoint it started from (empty: the run's state when it started)."""
    linked_run: str = ""
    """Set when the branch was started as a new run linked to a closed one."""
    status: BranchStatus = "running"
    reason: str = ""
    tasks: dict[str, TaskStatus] = Field(default_factory=dict[str, TaskStatus])
    """The branch's tasks (the branch point and its downstream) and how each ended."""
    reused: list[str] = Field(default_factory=list[str])
    """Upstream tasks whose verified results the branch reused instead of re-running."""
    metric: Metric | None = None
    selection: Selection = "best"
    ties: TieRule = "simplest"
    """How a line is kept among lines tied within the key metric's intervals."""
    held_out_allowed: bool = False
    """The key metric is held out and the request or policy allowed selecting on it."""
    score: LineScore = Field(default_factory=LineScore)
    selected: bool = False
    started_at: datetime | None = None
    finished_at: datetime | None = None


class TaskStart(Model):
    """Where a branch's branch-point task starts instead of at intake."""

    branch: str
    phase: CheckpointPhase
    job: JobSpec | None = None
    """The job to review and run (``execute``), or whose execution is re-verified (``verify``)."""
    outcome: ExecutionOutcome | None = None
    """The execution reused at a ``verify`` checkpoint (its artifacts are re-verified)."""
    by: str = ""


class BranchTree(Model):
    """Answer of a run's ``branches`` query, and the report's branch section."""

    run_id: str
    paused: bool = False
    holding: bool = False
    """The run waits after its tasks for branches or ``assay close``."""
    branches: list[BranchRecord] = Field(default_factory=list[BranchRecord])
    main: dict[str, LineScore] = Field(default_factory=dict[str, LineScore])
    """The main line's score in each group it was compared in."""
    kept: dict[str, str] = Field(default_factory=dict[str, str])
    """The line kept in each decided group (a branch's name, or ``main``)."""
    tied: dict[str, list[str]] = Field(default_factory=dict[str, list[str]])
    """Each group's lines tied within the key metric's intervals (none: no tie)."""
    why: dict[str, str] = Field(default_factory=dict[str, str])
    """Why each decided group's line was kept (the ranking, a tie and its rule, a person)."""
    refused: list[str] = Field(default_factory=list[str])
    """The latest refused branch or steering requests (who: why)."""
    steering: list[str] = Field(default_factory=list[str])
    """What people did to the run, in order (``ada paused``, ``bo resumed``)."""


class SweepLine(Model):
    """One line of a group in the sweep table: what it changed, measured and cost."""

    line: str
    """``main`` or a branch's name."""
    parameters: dict[str, Scalar | None] = Field(default_factory=dict[str, Scalar | None])
    """What the line changed (``2:args.alpha`` → its value); the main line: nothing."""
    status: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    """The branch-point task's verified metrics (numbers and estimates), as the job wrote them."""
    rank: int = 0
    cost_usd: float = 0.0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    kept: bool = False
    tied: bool = False
    """Tied with the first line within the key metric's intervals."""


class SweepTable(Model):
    """Every line of one group of siblings in one table: the report's and results JSON's."""

    group: str
    from_task: str
    from_phase: CheckpointPhase = "planned"
    metric: Metric | None = None
    selection: Selection = "best"
    ties: TieRule = "simplest"
    kept: str = ""
    """The kept line (empty: not decided)."""
    why: str = ""
    """Why it was kept: the ranking, a tie and its rule, a person, a held-out metric allowed."""
    tie: bool = False
    lines: list[SweepLine] = Field(default_factory=list[SweepLine])
