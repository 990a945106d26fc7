"""The plan schema (``plan.json``; the older name ``pending_actions.json`` is read too).

A plan is a list of *decisions* (tasks) as the planning system writes them: ``task_id``,
``priority``, ``action`` and ``acceptance_criteria`` are required (a plan file may leave out
``priority``: intake scores it, see ``workers.intake.priority``); ``dependencies``,
``estimated_resources``, ``context``, ``deadline``, ``owner`` and ``rationale`` are optional.
Assay adds three optional fields per decision: ``job`` (what to run), ``checks``
(machine-checkable acceptance criteria) and ``inputs`` (data files the job may read).

Validation here is pure and deterministic, so both the CLI (before anything starts) and the
ResearchWorkflow (on intake) run the same checks.
"""

from __future__ import annotations

import heapq
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
    model_validator,
)

from workflows.contracts.alternatives import BranchSpec, Metric
from workflows.contracts.arguments import check_job_args
from workflows.contracts.base import CheckOp as CheckOp
from workflows.contracts.base import PlainText, StrictModel
from workflows.contracts.base import Scalar as Scalar
from workflows.contracts.base import TaskId as TaskId
from workflows.contracts.environments import (
    MAX_REQUIREMENTS,
    EnvironmentName,
    RequirementText,
)
from workflows.contracts.hypotheses import MAX_HYPOTHESES, Hypothesis, check_hypotheses

Priority = Literal["HIGH", "MEDIUM", "LOW"]
PRIORITY_RANK: dict[str, int] = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}
Complexity = Literal["light", "full"]
"""A task's tier: ``light`` (one model reviewer, debuggers only after a second failure) or
``full`` (everything); see ``workflows.task.tiering``."""



MAX_TASKS = 10_000
"""Most tasks a plan may have. A run's result stays small at any size (each task's status and
reason, ~200 bytes, cut to fit; ``workflows.common.sizes``); a run of over 1 000 tasks packs
its plan (``workflows.contracts.packing``) and runs its tasks in batches, each a child
workflow (``workflows.research.batches``), so its history stays far from Temporal's limits."""
MAX_HELD_OUT = 100
"""Most metrics a plan may list as held out."""


class Resources(StrictModel):
    """Limits one job runs under; the sandbox enforces them."""

    memory_mb: int = Field(default=1024, ge=16, le=262_144)
    timeout_s: float = Field(default=600.0, gt=0, le=7 * 24 * 3600)
    cpus: float = Field(default=1.0, gt=0, le=256)


class JobSpec(StrictModel):
    """What a task runs: a Python script from the plan's folder or inline source.

    Once a plan is resolved (see ``workers.intake.planfile``), ``source`` holds the exact code that
    will run and ``filename`` its name in the working directory, so the workflow history
    records precisely what ran and no worker needs the plan's folder.
    """

    entry: str | None = Field(default=None, min_length=1, max_length=512)
    code: str | None = Field(default=None, min_length=1)
    args: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    expected_artifacts: list[str] = Field(default_factory=list[str])
    expected_metrics: list[str] = Field(default_factory=list[str])
    resources: Resources = Field(default_factory=Resources)
    requirements: list[RequirementText] = Field(default_factory=list[str],
                                                max_length=MAX_REQUIREMENTS)
    """Packages the job needs, optionally pinned (``numpy>=1.26``); checked before it runs.
    Requirements the worker's interpreter does not meet are provisioned (see
    :mod:`workflows.contracts.environments`)."""
    environment: EnvironmentName | None = None
    """The environment the job runs in (``science`` or one the operator defines); none: the
    worker's own interpreter, plus any requirements."""

    analysis: str | None = Field(default=None, min_length=1, max_length=120)
    """What analysis the job does, in a few words, as the model that wrote it labels it
    (``mixed-effects regression``): a task's kind uses it when the job's calls name no known
    analysis (see :mod:`workflows.contracts.kinds`)."""

    source: str | None = None
    filename: str | None = None

    @model_serializer(mode="wrap")
    def _without_base_environment(self, handler: SerializerFunctionWrapHandler,
                                  ) -> dict[str, Any]:
        """Leave out an unset environment and analysis label.

        A job naming none serialises as before environments existed, so saved skills, the
        request keys of model recordings and plan digests stay the same.
        """
        data: dict[str, Any] = handler(self)
        if self.environment is None:
            data.pop("environment", None)
        if self.analysis is None:
            data.pop("analysis", None)
        return data

    @model_validator(mode="after")
    def _one_source(self) -> JobSpec:
        if (self.entry is None) == (self.code is None):
            raise ValueError('a job needs exactly one of "entry" (a script path) or "code"')
        for name in self.expected_artifacts:
            if not _is_plain_relative(name):
                raise ValueError(f"expected artifact {name!r} must be a relative path inside "
                                 "the working directory")
        check_job_args(self.args)
        return self


def _is_plain_relative(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "" not in parts


class Check(StrictModel):
    """A machine-checkable acceptance criterion on a metric, e.g. ``p_value < 0.05``."""

    metric: str = Field(min_length=1, max_length=128)
    op: CheckOp
    value: Scalar

    def describe(self) -> str:
        """Human form, as used in reports: ``p_value < 0.05``."""
        return f"{self.metric} {self.op} {self.value!r}"

    def holds(self, actual: Scalar) -> bool:
        """Whether ``actual`` satisfies this check.

        Raises:
            TypeError: ordering text against numbers (``==`` and ``!=`` always compare).
        """
        expected = self.value
        if self.op == "==":
            return actual == expected
        if self.op == "!=":
            return actual != expected
        if isinstance(actual, str) or isinstance(expected, str):
            if not (isinstance(actual, str) and isinstance(expected, str)):
                raise TypeError("ordering between text and numbers")
            return _ordered(actual, self.op, expected)
        return _ordered(float(actual), self.op, float(expected))


def _ordered(actual: Any, op: str, expected: Any) -> bool:
    if op == "<":
        return bool(actual < expected)
    if op == "<=":
        return bool(actual <= expected)
    if op == ">":
        return bool(actual > expected)
    return bool(actual >= expected)


CycleTaskRef = Annotated[str, StringConstraints(
    pattern=r"^c[1-9][0-9]{0,2}\.[A-Za-z0-9_.-]{1,64}$")]
"""An earlier cycle's task in a study: ``c<cycle>.<task_id>`` (``c1.data``)."""


def cycle_ref(ref: str) -> tuple[int, str]:
    """``(1, "data")`` for ``c1.data``."""
    cycle, _, task_id = ref[1:].partition(".")
    return int(cycle), task_id


class InputFile(StrictModel):
    """A data file a job may read, fixed by content when the plan is submitted."""

    name: str
    path: str
    sha256: str
    size: int


class PriorityScore(StrictModel):
    """The computed priority of a task the plan gave none: points, their level, and why.

    See ``workers.intake.priority`` (``assign_priority``).
    """

    score: int = Field(ge=0, le=100)
    level: Priority
    reasons: list[str] = Field(default_factory=list[str], max_length=5)


class Decision(StrictModel):
    """One task of a plan, as in ``plan.json``, plus Assay's job fields."""

    task_id: TaskId
    priority: Priority
    action: PlainText = Field(min_length=1, max_length=4000)
    acceptance_criteria: list[PlainText] = Field(min_length=1)
    dependencies: list[TaskId] = Field(default_factory=list[str])
    estimated_resources: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    deadline: datetime | None = None
    owner: PlainText | None = None
    rationale: PlainText | None = None
    job: JobSpec | None = None
    checks: list[Check] = Field(default_factory=list[Check])
    inputs: list[str] = Field(default_factory=list[str])
    branches: list[BranchSpec] = Field(default_factory=list[BranchSpec], max_length=20)
    """Alternatives explored from the start: each runs this task and its downstream as a
    branch beside the main line, and the lines are compared when all have finished."""
    metric: Metric | None = None
    """The key metric this task's branches are compared on (default: the plan's)."""
    hypothesis: TaskId | None = None
    """The plan's hypothesis this task's verified metrics are evidence for."""
    reuse: list[CycleTaskRef] = Field(default_factory=list[str], max_length=20)
    """In a study's cycle: earlier cycles' tasks (``c1.data``) whose verified artifacts this
    task reads, by reference and pinned by sha256, at ``deps/c1.data/<name>``."""

    resolved_inputs: list[InputFile] = Field(default_factory=list[InputFile])
    priority_score: PriorityScore | None = None
    """Set at intake when the plan gave no ``priority``: the computed score that chose it."""
    complexity: Complexity | None = None
    """The plan's (or the planner's) label; the rules of ``workflows.task.tiering`` may raise
    ``light`` to ``full``, never lower ``full`` (none: the rules decide alone)."""

    @model_serializer(mode="wrap")
    def _without_unset_branching(self, handler: SerializerFunctionWrapHandler,
                                 ) -> dict[str, Any]:
        """Leave out what is unset of the later fields (so digests stay as before)."""
        return _without_unset(handler(self), branches=[], metric=None, hypothesis=None,
                              reuse=[], priority_score=None, complexity=None)


class Plan(StrictModel):
    """A whole plan: ``plan.json``."""

    meeting_id: str | None = Field(default=None, max_length=200)
    generated_at: datetime | None = None
    context: PlainText | None = None
    decisions: list[Decision] = Field(min_length=1, max_length=MAX_TASKS)
    environment: EnvironmentName | None = None
    """Default environment of every job of the plan that names none."""
    metric: Metric | None = None
    """The key metric branches of this plan are compared on, and which way is better."""
    hypotheses: list[Hypothesis] = Field(default_factory=list[Hypothesis],
                                         max_length=MAX_HYPOTHESES)
    """Hypotheses the plan proposes (always ``open``: verdicts come from verified metrics)."""
    held_out: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default_factory=list[str], max_length=MAX_HELD_OUT)
    """Metrics measured on held-out data (besides every ``test_`` one): lines and a study's
    progress are never chosen by them unless selection on them is allowed."""

    @model_serializer(mode="wrap")
    def _without_unset_metric(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave out an unset ``metric``, no ``hypotheses`` or ``held_out`` (digests stay)."""
        return _without_unset(handler(self), metric=None, hypotheses=[], held_out=[])

    @model_validator(mode="after")
    def _hypotheses_linked(self) -> Plan:
        check_hypotheses(self.hypotheses, known_parents=False)
        proposed = {h.id for h in self.hypotheses}
        for item in self.hypotheses:
            if (item.status != "open" or item.evidence or item.decided_in is not None
                    or item.concluded):
                raise ValueError(f"hypothesis {item.id}: a plan proposes it open, without "
                                 "evidence (its verdict comes from verified metrics)")
        for decision in self.decisions:
            if decision.hypothesis is not None and decision.hypothesis not in proposed:
                raise ValueError(f"task {decision.task_id}: unknown hypothesis "
                                 f"{decision.hypothesis!r} (the plan proposes "
                                 f"{', '.join(sorted(proposed)) or 'none'})")
        return self

    def by_id(self) -> dict[str, Decision]:
        """Decisions keyed by task id."""
        return {d.task_id: d for d in self.decisions}


def _without_unset(data: dict[str, Any], **unset: Any) -> dict[str, Any]:
    """``data`` without the named fields that hold their unset value."""
    for name, value in unset.items():
        if name in data and data[name] == value:
            del data[name]
    return data


class PlanError(ValueError):
    """A plan is structurally wrong; the message says what and where."""


def check_graph(plan: Plan) -> list[str]:
    """Validate ids and dependencies and return the execution order.

    The order is Kahn's topological order; among tasks that are ready at the same time,
    higher priority comes first, then plan order.

    Raises:
        PlanError: on duplicate ids, unknown dependencies, self-dependencies or a cycle
            (the message names the tasks on it).
    """
    seen: set[str] = set()
    for decision in plan.decisions:
        if decision.task_id in seen:
            raise PlanError(f"task {decision.task_id}: duplicate task_id")
        seen.add(decision.task_id)
    for decision in plan.decisions:
        for dep in decision.dependencies:
            if dep == decision.task_id:
                raise PlanError(f"task {decision.task_id}: depends on itself")
            if dep not in seen:
                raise PlanError(f"task {decision.task_id}: unknown dependency {dep!r}")
    return _kahn(plan)


def _kahn(plan: Plan) -> list[str]:
    position = {d.task_id: i for i, d in enumerate(plan.decisions)}
    rank = {d.task_id: (PRIORITY_RANK[d.priority], position[d.task_id]) for d in plan.decisions}
    dependants: dict[str, list[str]] = {d.task_id: [] for d in plan.decisions}
    in_degree = {d.task_id: len(set(d.dependencies)) for d in plan.decisions}
    for decision in plan.decisions:
        for dep in set(decision.dependencies):
            dependants[dep].append(decision.task_id)
    ready = [(rank[t], t) for t, n in in_degree.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, current = heapq.heappop(ready)
        order.append(current)
        for nxt in dependants[current]:
            in_degree[nxt] -= 1
            if in_degree[nxt] == 0:
                heapq.heappush(ready, (rank[nxt], nxt))
    if len(order) != len(plan.decisions):
        stuck = sorted((t for t, n in in_degree.items() if n > 0), key=position.__getitem__)
        raise PlanError(f"dependency cycle among tasks: {', '.join(_cycle(plan, stuck))}")
    return order


def _cycle(plan: Plan, stuck: list[str]) -> list[str]:
    """One actual cycle among the stuck tasks, e.g. ``a -> b -> a``, as a list of ids."""
    deps = {d.task_id: [x for x in d.dependencies if x in stuck] for d in plan.decisions}
    path: list[str] = []
    node = stuck[0]
    while node not in path:
        path.append(node)
        node = deps[node][0]
    loop = path[path.index(node):]
    return [*loop, node]
