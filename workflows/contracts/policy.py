"""Run-level policy: task queues, parallelism, retries, review limits and human gates.

Chosen when a run starts (from settings and the command line) and carried in its input, so
workflows never read settings.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from workflows.contracts.alternatives import BranchSpec, Metric, TieRule
from workflows.contracts.base import StrictModel
from workflows.contracts.environments import EnvironmentName
from workflows.contracts.pools import Pool

PackageName = Annotated[str, Field(min_length=1, max_length=100,
                                   pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


class PackagePolicy(StrictModel):
    """Which packages a job environment may hold (every resolved package, dependencies too).

    ``block`` refuses the named packages; ``allow``, when set, refuses every package not
    named in it. Names compare as the index does (``Scikit_Learn`` is ``scikit-learn``).
    """

    allow: list[PackageName] | None = Field(default=None, max_length=2000)
    block: list[PackageName] = Field(default_factory=list[str], max_length=2000)


class ReviewPolicy(StrictModel):
    """Limits reviewers hold a job to (from settings, fixed when the run starts)."""

    max_timeout_s: float = 6 * 3600
    max_memory_mb: int = 8192
    max_cpus: float = 8
    packages: PackagePolicy = Field(default_factory=PackagePolicy)


GateKind = Literal["plan", "step", "error", "result", "branch", "cycle"]
TimeoutAction = Literal["approve", "reject"]
Tiering = Literal["auto", "light", "full"]
"""How tasks are tiered: by their label and the rules (``auto``), or all forced to one tier."""


class GateRule(StrictModel):
    """Whether a gate kind needs a person, who may decide, and what a timeout means."""

    human: bool = False
    approvers: list[str] = Field(default_factory=list[str])
    timeout_s: float = Field(default=7 * 24 * 3600, gt=0)
    on_timeout: TimeoutAction = "reject"


class GatePolicy(StrictModel):
    """Run-level gate policy; every kind is automatic unless set to human."""

    plan: GateRule = Field(default_factory=GateRule)
    step: GateRule = Field(default_factory=GateRule)
    error: GateRule = Field(default_factory=GateRule)
    result: GateRule = Field(default_factory=GateRule)
    branch: GateRule = Field(default_factory=GateRule)
    """A person chooses among finished sibling branches (``assay approve RUN --gate branch
    --choose NAME``); on a timeout ``approve`` takes the comparator's best, ``reject`` keeps
    the main line."""
    cycle: GateRule = Field(default_factory=GateRule)
    """A person confirms a study's decision after each cycle (``approve``), stops the study
    (``reject``) or overrides it (``choice``: ``iterate``, ``fix``, ``stop`` or
    ``pivot:H``); on a timeout ``approve`` goes on with the rules' decision, ``reject``
    stops."""

    def rule(self, kind: GateKind) -> GateRule:
        """The rule for one gate kind."""
        rule: GateRule = getattr(self, kind)
        return rule


class Queues(StrictModel):
    """Task queues a run's activities go to (from settings, fixed when the run starts)."""

    orchestration: str = Pool.ORCHESTRATION.value
    agents: str = Pool.AGENTS.value
    sandbox: str = Pool.SANDBOX.value
    reflection: str = Pool.REFLECTION.value
    skills: str = Pool.SKILLS.value


RECORDING_NAME_CHARS = 100
"""The longest recording name (the file is ``<name>.jsonl``)."""


class ModelRecording(StrictModel):
    """Record every model exchange of a run under a name, or answer only from a stored one.

    Nothing here is a host path: any Temporal client can start a run, so a run may only name
    a file inside the agents worker's own data directory (``record``) or a recording the
    artifact store holds (``replay``). The CLI turns ``--record PATH`` and ``--replay PATH``
    into these on the submitting machine.
    """

    mode: Literal["record", "replay"]
    name: str | None = Field(default=None, min_length=1, max_length=RECORDING_NAME_CHARS)
    """``record``: the agents worker appends to ``<its data dir>/recordings/recorded/<name>.jsonl``
    (letters, digits, ``.``, ``-`` and ``_``; no separator, no ``..``)."""
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """``replay``: the recording put in the artifact store at submission, fetched by digest."""
    path: str | None = Field(default=None, max_length=4096)
    """A host path, as runs named their recording before names: never opened, and refused
    (``RecordingRefused``) by the agents worker. A policy file may still say it: the CLI turns
    it into a name or a digest before the run starts."""

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str | None) -> str | None:
        if name is not None:
            check_recording_name(name)
        return name


def check_recording_name(name: str) -> str:
    """``name`` if it names a file inside one folder: no separator, no ``..``, not hidden.

    Raises:
        ValueError: saying which rule it breaks.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) or ".." in name:
        raise ValueError(f"recording name {name[:60]!r} is not a plain file name (letters, "
                         "digits, '.', '-' and '_', starting with a letter or digit, no '..')")
    if len(name) > RECORDING_NAME_CHARS:
        raise ValueError(f"recording name is over {RECORDING_NAME_CHARS} characters")
    return name


class AgentsPolicy(StrictModel):
    """Whether and how a run uses model-backed agents (never holds a key)."""

    enabled: bool = False
    """A model (an API key on the agents workers, or a replay recording) is available."""
    budget_tokens: int | None = Field(default=None, ge=0)
    budget_usd: float | None = Field(default=None, ge=0)
    recording: ModelRecording | None = None
    model_review: bool = True
    """Model reviewers add their verdicts to the deterministic ones."""
    debuggers: bool = True
    """On an execution failure reflection cannot patch, three debuggers propose fixes."""
    plan_review_rounds: int = Field(default=2, ge=0, le=5)
    no_model: Literal["wait", "defer"] = "defer"
    """A goal with no model (or a planner that fails): wait for ``assay plan``, or defer."""


class MemoryPolicy(StrictModel):
    """How a run uses reflection memory (semantic rules and procedural templates)."""

    enabled: bool = True
    apply_rules: bool = True
    """Apply semantic rules to the plan's jobs at intake (said in each task's rationale)."""
    use_templates: bool = True
    """A task without a job takes a cached procedural template of its task type."""
    min_rule_confidence: float = Field(default=0.75, ge=0, le=1)
    """Rules below this confidence are reported, never applied."""
    promotion: Literal["auto", "person"] = "auto"
    """``person``: a rule (3 tasks) or template (2 clean runs) waits as a candidate until a
    person runs ``assay memory approve``; ``auto``: promoted at once."""


class SkillPolicy(StrictModel):
    """How a run uses the skill library."""

    enabled: bool = True
    apply: bool = True
    """Let a confident match supply a goal's plan or a jobless task's job."""
    threshold: float = Field(default=0.35, ge=0, le=1)
    """Theta: minimum similarity for a pattern to be retrieved. Lower than the 0.5 of seed
    003, whose embedding model gives higher cosines: with the local model, right matches score
    0.26-0.83 (recall@5 0.85 at 0.35, 0.55 at 0.5 on the labelled query set)."""
    top_k: int = Field(default=20, ge=1, le=100)
    mmr_lambda: float = Field(default=0.7, ge=0, le=1)
    """λ of maximal marginal relevance (1: relevance only)."""
    queries: int = Field(default=4, ge=1, le=8)
    """Reformulations of the goal or action searched (the best similarity counts)."""
    min_confidence: float = Field(default=0.75, ge=0, le=1)
    """A match applies only at or above this confidence."""
    report: bool = True
    """Send every finished task's outcome to the library (extraction and statistics)."""


class BranchingPolicy(StrictModel):
    """How a run branches, compares and selects, and who may steer it.

    ``selection`` decides finished siblings: ``best`` (the comparator's first line becomes the
    run's), ``keep_all`` (all kept, the main line stays the run's) or ``person`` (a ``branch``
    gate). ``hold_open`` keeps the run waiting after its tasks, for branches, until ``assay
    close`` or ``hold_timeout_s``. ``recover`` are branches started from the ``execute``
    checkpoint of every task whose job failed (recovery by policy). ``approvers`` may branch
    and steer the run (empty: anyone).
    """

    selection: Literal["best", "keep_all", "person"] = "best"
    hold_open: bool = False
    hold_timeout_s: float = Field(default=7 * 24 * 3600, gt=0)
    approvers: list[str] = Field(default_factory=list[str], max_length=100)
    metric: Metric | None = None
    """The key metric lines are compared on (a plan's or a request's wins over it)."""
    ties: TieRule = "simplest"
    """Which line is kept among lines tied within the key metric's intervals: ``simplest``
    (fewest parameters changed, then the earliest), ``cheapest`` or ``person``."""
    allow_test_selection: bool = False
    """Compare lines on a held-out metric (``test_`` prefix, a plan's ``held_out``) all the
    same (``assay run --allow-test-selection``); the report says so."""
    recover: list[BranchSpec] = Field(default_factory=list[BranchSpec], max_length=20)
    """Recovery branches (``BranchSpec`` fields) started from a failed job's checkpoint."""


class RunPolicy(StrictModel):
    """Run-level knobs chosen when a run starts."""

    max_parallel: int = Field(default=4, ge=1, le=64)
    heartbeat_timeout_s: float = Field(default=15.0, ge=1, le=600)
    max_retries: int | None = Field(default=None, ge=0, le=5)
    """Retries per subphase (approval, execution, verification) for every failure; ``None``:
    by the failure's category (``workflows.task.retrying``: 5 transient, 3 configuration,
    2 fundamental)."""
    reflection_timeout_s: float = Field(default=15.0, gt=0, le=600)
    """How long a task waits for reflection before going on as if no patch were offered."""
    review: ReviewPolicy = Field(default_factory=ReviewPolicy)
    gates: GatePolicy = Field(default_factory=GatePolicy)
    agents: AgentsPolicy = Field(default_factory=AgentsPolicy)
    memory: MemoryPolicy = Field(default_factory=MemoryPolicy)
    skills: SkillPolicy = Field(default_factory=SkillPolicy)
    branching: BranchingPolicy = Field(default_factory=BranchingPolicy)
    tiering: Tiering = "auto"
    """``auto``: each task is light or full by its label and the rules of
    ``workflows.task.tiering``; ``light`` or ``full``: every task is."""
    environment: EnvironmentName | None = None
    """The job environment of every job of the run that names none (``assay run
    --environment``); none: such jobs run in the worker's own interpreter."""
    checkpoint_every_min: float = Field(default=0, ge=0, le=7 * 24 * 60)
    """Name a periodic checkpoint (``periodic:N``) at the first task to end after each this
    many minutes of the run (0: none)."""
    batch_tasks: int | None = Field(default=None, ge=1, le=1000)
    """Tasks per batch: a run of more tasks than this runs them in batches of this many,
    each a child workflow (``workflows.research.batches``). None: batches of 500 for a run of
    over 1 000 tasks, none for a smaller one."""

    @model_serializer(mode="wrap")
    def _without_unset_batches(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave out an unset ``batch_tasks``: a policy naming none serialises as before."""
        data: dict[str, Any] = handler(self)
        if self.batch_tasks is None:
            data.pop("batch_tasks", None)
        return data


class HostPathError(ValueError):
    """A run's policy names a host path for its model recording; the workers open none."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"policy.agents.recording names the host path {path[:80]!r}: the agents workers "
            "open no path a run names. Name the recording instead: {\"mode\": \"record\", "
            "\"name\": \"NAME\"} (written in the agents worker's data directory, "
            "recordings/recorded/NAME.jsonl), or replay by digest: {\"mode\": \"replay\", "
            "\"sha256\": ...} of a recording put in the artifact store (the CLI's --record "
            "and --replay do both)")
        self.path = path


def refuse_host_paths(policy: RunPolicy) -> None:
    """Refuse, before a start, a policy the workers would refuse (see :class:`HostPathError`).

    Raises:
        HostPathError: the run's model recording names a host path.
    """
    recording = policy.agents.recording
    if recording is not None and recording.path is not None:
        raise HostPathError(recording.path)
