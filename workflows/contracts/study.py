"""A study's contracts: its policy, each cycle's summary and decision, and its carried state.

A study runs cycles (each one run of a plan) and after each decides by rules
(``workflows.study.rules``) to ``iterate``, ``pivot``, ``fix`` or ``stop``. Between cycles
the study continues as new with a :class:`StudyState`, which is therefore kept small: every
list below has a stated bound, only the latest :data:`FULL_SUMMARIES` cycle summaries keep
their tasks (older ones keep their headline: counts, cost, time, key value, verdicts and the
decision), and the whole state stays under :data:`STATE_BYTES` at the largest it may grow.
The hypotheses are in ``workflows.contracts.hypotheses`` and exported here too.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from workflows.contracts.alternatives import Metric
from workflows.contracts.base import (
    BY_CHARS,
    COMMENT_CHARS,
    MAX_GOAL_CHARS,
    Decided,
    Model,
    PlainText,
    StrictModel,
    TaskId,
)
from workflows.contracts.estimates import MetricValue
from workflows.contracts.execution import RunStatus, TaskStatus
from workflows.contracts.hypotheses import (
    MAX_HYPOTHESES,
    HypothesisTest,
    HypothesisTree,
    Verdict,
)
from workflows.contracts.hypotheses import Evidence as Evidence
from workflows.contracts.hypotheses import Hypothesis as Hypothesis
from workflows.contracts.hypotheses import HypothesisStatus as HypothesisStatus
from workflows.contracts.plaintext import clip
from workflows.contracts.resources import MAX_KINDS, Calibration

MAX_CYCLES = 100
"""Most cycles a study may run."""
MAX_OUTCOMES = 60
"""Tasks a cycle summary lists (the rest are counted in ``tasks_total``)."""
MAX_METRICS = 8
"""Verified metrics a task outcome keeps (plain values or estimates; names cut to 64
characters, text values to 64); those tests name first, and it says which it left out."""
TEXT_CHARS = 300
"""The longest reason, diagnosis, blocker or action a summary keeps."""
MAX_BLOCKERS = 20
MAX_DEFERRED = 20
MAX_CARRIED = 50
"""Failed and deferred tasks a study carries forward (the newest)."""
MAX_CRITERIA = 20
HEADLINE_VERDICTS = 5
"""Verdicts an older cycle's headline keeps (those that decided a hypothesis)."""
FULL_SUMMARIES = 2
"""Cycle summaries a study's state keeps whole; older ones keep their headline."""
STATE_BYTES = 1_500_000
"""The most a study's state may take as JSON at its largest (100 cycles, 100 hypotheses of
1 000 characters, every list full and every text at its longest): under the server's 2 MB
payload limit with room for the workflow's input envelope. A 50-cycle study of 20-task
cycles takes about a tenth of it (``tests/workflows/study/test_state_size.py``)."""

ESCALATE_AFTER_FIXES = 2
"""Failed fixes in a row of one line (a hypothesis, or a task where none is linked) after
which a study escalates to a pivot (fail fast)."""
ESCALATE_AFTER_STALLED = 2
"""Cycles in a row without progress after which a study escalates to a pivot (once), before
``no_progress_cycles`` (also 2) would stop it."""

Action = Literal["iterate", "pivot", "fix", "stop"]


class TaskOutcome(Model):
    """How one task of a cycle ended, as the next cycle's planning needs it."""

    task_id: str
    status: TaskStatus
    reason: str = ""
    hypothesis: str | None = None
    """The hypothesis the plan linked this task to."""
    metrics: dict[str, MetricValue] = Field(default_factory=dict[str, MetricValue])
    """Verified metrics: a completed task's only (a failed task's numbers are not evidence);
    plain values, or estimates with their interval (``workflows.contracts.estimates``)."""
    metrics_omitted: str = Field(default="", max_length=TEXT_CHARS)
    """What :attr:`metrics` left out (``… 4 more metrics not shown: a, b, c, d``), or ""."""
    checks_passed: int = 0
    checks_declared: int = 0
    wall_s: float | None = None
    estimated_s: float | None = None
    kind: str = Field(default="", exclude_if=lambda v: not v)
    """The task's kind (``workflows.contracts.kinds``): what its estimate is calibrated by."""
    calibrated_s: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """``estimated_s`` with its kind's calibration from the earlier cycles applied (none: no
    estimate, or the kind not calibrated yet)."""
    cost_usd: float = 0.0
    estimated_cost_usd: float | None = None
    diagnosis: str = ""
    """For a task that did not complete: reflection's root cause and likely fix, or its reason."""
    action: str = ""


class DeferredPatch(Model):
    """A fix reflection deferred to the next cycle (too unsure to apply in this one)."""

    task_id: str
    root_cause: str
    likely_fix: str
    confidence: float


class CarriedTask(Model):
    """A failed or deferred task carried into the next cycles until a task of its id completes."""

    task_id: str
    cycle: int
    status: TaskStatus
    reason: str = ""
    diagnosis: str = ""
    action: str = ""


class CycleDecision(StrictModel):
    """Go / no-go after a cycle: what the study does next, and why."""

    action: Action
    reason: str = Field(min_length=1, max_length=COMMENT_CHARS)
    hypotheses: list[TaskId] = Field(default_factory=list[str], max_length=20)
    """The hypotheses the decision concerns."""
    by: str = Field(default="rules", min_length=1, max_length=BY_CHARS)
    """``rules``, or the person who confirmed or overrode the rules at the ``cycle`` gate."""
    pursue: TaskId | None = None
    """For ``pivot``: the sibling hypothesis to pursue next."""
    person: Decided | None = None
    """The person who answered the ``cycle`` gate: who confirmed the rules' decision (``by``
    stays ``rules``) or made this one (``by`` names them), when, their comment and channel."""
    fixes: list[TaskId] = Field(default_factory=list[str], max_length=20,
                                exclude_if=lambda v: not v)
    """For ``fix``: the lines it fixes, each a hypothesis, or a task where none is linked
    (what :mod:`workflows.study.escalation` counts failed fixes on)."""
    escalated: bool = Field(default=False, exclude_if=lambda v: not v)
    """A fail-fast escalation: a ``pivot`` away from lines whose fixes kept failing or from
    cycles without progress (``workflows.study.escalation``)."""
    abandon: list[TaskId] = Field(default_factory=list[str], max_length=20,
                                  exclude_if=lambda v: not v)
    """For an escalation: the lines it abandons (the tree marks such hypotheses)."""

    def who(self) -> str:
        """``rules``; ``rules, confirmed by ada via cli, …: "…"``; or ``ada via temporal, …``."""
        if self.person is None:
            return self.by
        if self.by == self.person.by:
            return self.person.text()
        return f"{self.by}, confirmed by {self.person.text()}"

    @model_validator(mode="after")
    def _pivot_names_a_sibling(self) -> CycleDecision:
        if self.pursue is not None and self.action != "pivot":
            raise ValueError('"pursue" names the sibling hypothesis of a pivot, and only of one')
        if self.action == "pivot" and self.pursue is None and not self.escalated:
            raise ValueError('a pivot names the sibling hypothesis it pursues ("pursue"), '
                             'unless it is an escalation ("escalated": abandon and try another '
                             'approach)')
        if self.escalated and self.action != "pivot":
            raise ValueError('an escalation ("escalated") is a pivot')
        return self


HEADLINE_NOTE = "an older cycle keeps its headline: its report has the rest"
"""What an older cycle's ``omitted`` says (:meth:`CycleSummary.headline`)."""
TASKS_CUT = " (completed, not linked first)"
"""How a summary's ``omitted`` ends when it kept only its first task outcomes (after the count
of tasks it left out: ``1 task``, ``3 tasks``)."""


class CycleSummary(Model):
    """One cycle, as the study keeps it and the next cycle's planning reads it."""

    cycle: int = Field(ge=1)
    run_id: str
    plan_sha256: str
    status: RunStatus
    tasks: list[TaskOutcome] = Field(default_factory=list[TaskOutcome], max_length=MAX_OUTCOMES)
    tasks_total: int = 0
    unfinished: int = 0
    """Tasks that did not complete (failed, rejected, blocked, deferred, cancelled)."""
    blockers: list[str] = Field(default_factory=list[str], max_length=MAX_BLOCKERS)
    deferred: list[DeferredPatch] = Field(default_factory=list[DeferredPatch],
                                          max_length=MAX_DEFERRED)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    key_value: float | None = None
    """The best verified value of the study's key metric in this cycle (none: not reported)."""
    key_task: str = ""
    """The task of this cycle whose verified value ``key_value`` is (empty: none)."""
    key_ci: tuple[float, float] | None = None
    """The interval of ``key_value``, where its task wrote the metric as an estimate."""
    results_json: str = Field(default="", max_length=4096)
    """The cycle's results JSON (its report), for the study's report."""
    results_sha256: str = Field(default="", max_length=64)
    """The same results JSON in the artifact store (empty: not stored)."""
    verdicts: list[Verdict] = Field(default_factory=list[Verdict], max_length=MAX_HYPOTHESES)
    decision: CycleDecision | None = None
    omitted: list[str] = Field(default_factory=list[str])
    """What was cut to keep the summary small (the cycle's report has all of it)."""

    def headline(self) -> CycleSummary:
        """What an older cycle keeps: counts, cost, time, key value and decision.

        The verdicts that decided a hypothesis stay, without their reasons (the tree has the
        evidence), and the decision's reason is cut to :data:`TEXT_CHARS`.
        """
        if any(v.reason or v.evidence for v in self.verdicts) or self.tasks or self.deferred:
            decided = [Verdict(hypothesis=v.hypothesis, status=v.status, reason="",
                               settled=True)
                       for v in self.verdicts if v.settled][:HEADLINE_VERDICTS]
            decision = self.decision and self.decision.model_copy(update={
                "reason": clip(self.decision.reason, TEXT_CHARS),
                "hypotheses": self.decision.hypotheses[:HEADLINE_VERDICTS],
                "fixes": self.decision.fixes[:HEADLINE_VERDICTS],
                "abandon": self.decision.abandon[:HEADLINE_VERDICTS]})
            return self.model_copy(update={
                "tasks": [], "deferred": [], "blockers": self.blockers[:1],
                "verdicts": decided, "decision": decision,
                "omitted": [HEADLINE_NOTE]})
        return self


class StudyPolicy(StrictModel):
    """When a study stops, what it steers by, and whether a person confirms each decision."""

    max_cycles: int = Field(default=10, ge=1, le=MAX_CYCLES)
    budget_usd: float | None = Field(default=None, gt=0)
    no_progress_cycles: int = Field(default=2, ge=1, le=MAX_CYCLES)
    escalate_after_fixes: int | None = Field(default=ESCALATE_AFTER_FIXES, ge=1, le=MAX_CYCLES)
    """A line whose fixes failed this many cycles in a row escalates to a pivot (None: never)."""
    escalate_after_stalled: int | None = Field(default=ESCALATE_AFTER_STALLED, ge=1,
                                               le=MAX_CYCLES)
    """This many cycles in a row without progress escalate to a pivot, once, before the
    ``no_progress_cycles`` stop (None: never; above ``no_progress_cycles``: the stop comes
    first)."""
    acceptance: list[HypothesisTest] = Field(default_factory=list[HypothesisTest],
                                             max_length=MAX_CRITERIA)
    """The goal's acceptance criteria: metric tests that must all hold to stop."""
    key_metric: Metric | None = None
    """The metric progress is measured on, and which way is better."""
    allow_test_selection: bool = False
    """The key metric may be a held-out one (``test_``, a plan's ``held_out``); the report
    says it was."""

    @model_validator(mode="after")
    def _metric_criteria(self) -> StudyPolicy:
        for test in self.acceptance:
            if test.check is not None:
                raise ValueError(f"acceptance criterion {test.describe()!r}: write it as a "
                                 "metric test (a check reference belongs to one plan)")
        return self


class StudyState(Model):
    """What a study carries across continue-as-new: small, bounded (see :data:`STATE_BYTES`)."""

    study_id: str
    goal: PlainText | None = Field(default=None, max_length=MAX_GOAL_CHARS)
    first_plan: str | None = Field(default=None, max_length=TEXT_CHARS)
    """The first plan's name and digest (``name@sha256``), for a study started from a plan."""
    policy: StudyPolicy = Field(default_factory=StudyPolicy)
    tree: HypothesisTree = Field(default_factory=HypothesisTree)
    summaries: list[CycleSummary] = Field(default_factory=list[CycleSummary],
                                          max_length=MAX_CYCLES)
    carried: list[CarriedTask] = Field(default_factory=list[CarriedTask],
                                       max_length=MAX_CARRIED)
    carried_dropped: int = 0
    """Carried tasks left out to keep :data:`MAX_CARRIED` (the oldest first)."""
    spent_usd: float = 0.0
    cycles: int = 0
    calibration: dict[str, Calibration] = Field(default_factory=dict[str, Calibration],
                                                max_length=MAX_KINDS, exclude_if=lambda v: not v)
    """Each task kind's time-estimate calibration from the cycles' actuals."""

    @model_validator(mode="after")
    def _has_a_start(self) -> StudyState:
        if self.goal is None and self.first_plan is None:
            raise ValueError('a study starts from a "goal" or a "first_plan"')
        return self

    def latest(self) -> CycleSummary | None:
        """The last cycle's summary (none before the first cycle)."""
        return self.summaries[-1] if self.summaries else None


class StudyContext(Model):
    """Where a study stands, given to the run of its next cycle (for its planner).

    The hypothesis tree, the latest cycles' summaries (each task's outcome, verified
    metrics, actual against estimated time and cost, blockers and deferred patches), the
    failed and deferred tasks carried forward with their diagnosis, the decision that
    asked for this cycle, and the study's policy (what it stops on). Bounded like the
    :class:`StudyState` it comes from.
    """

    study_id: str
    cycle: int = Field(ge=1, le=MAX_CYCLES)
    tree: HypothesisTree = Field(default_factory=HypothesisTree)
    previous: list[CycleSummary] = Field(default_factory=list[CycleSummary],
                                         max_length=FULL_SUMMARIES)
    carried: list[CarriedTask] = Field(default_factory=list[CarriedTask],
                                       max_length=MAX_CARRIED)
    decision: CycleDecision | None = None
    """Why this cycle runs (``iterate``, ``pivot`` to ``pursue``, ``fix``); none for the first."""
    policy: StudyPolicy = Field(default_factory=StudyPolicy)
    """When the study stops: its acceptance criteria, key metric, cycle limit and budget."""
    spent_usd: float = 0.0
    """What the study's earlier cycles cost."""
    calibration: dict[str, Calibration] = Field(default_factory=dict[str, Calibration],
                                                max_length=MAX_KINDS, exclude_if=lambda v: not v)
    """Each task kind's time-estimate calibration: factor and accuracy."""

    def reusable(self) -> dict[str, TaskOutcome]:
        """The earlier tasks this cycle's tasks may reuse, by ``c<cycle>.<task_id>``.

        The completed tasks of the cycles shown whose report the study keeps (the study
        resolves a reference from that report into the task's verified artifacts).
        """
        return {f"c{s.cycle}.{t.task_id}": t for s in self.previous if s.results_json
                for t in s.tasks if t.status == "completed"}


def context_of(state: StudyState) -> StudyContext:
    """What the next cycle of ``state``'s study is told."""
    latest = state.latest()
    return StudyContext(study_id=state.study_id, cycle=state.cycles + 1, tree=state.tree,
                        previous=state.summaries[-FULL_SUMMARIES:], carried=state.carried,
                        decision=latest.decision if latest else None,
                        policy=state.policy, spent_usd=state.spent_usd,
                        calibration=state.calibration)
