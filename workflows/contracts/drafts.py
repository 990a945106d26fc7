"""The planner's answer: a drafted plan, and in a study the hypotheses it tests.

These are the structured answers the planner fills in (their JSON schemas are the tools
offered). A run of its own is offered :class:`PlanDraftOutput`, whose schema is as it always
was (recorded model exchanges are keyed by it); a study's cycle is offered
:class:`StudyPlanDraftOutput`, which adds hypotheses, each task's link to one and the
earlier cycles' tasks it reuses. Both come
back to the workflow as a :class:`PlanDraftOutput`, whose dump leaves the study's fields out
when unset, so a plan without hypotheses is drafted, reviewed and recorded as before.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from workflows.contracts.base import Model
from workflows.contracts.hypotheses import STATEMENT_CHARS
from workflows.contracts.plan import Complexity, Priority

TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class PlannedCheck(Model):
    """A machine-checkable criterion on a metric the job will report."""

    metric: str = Field(min_length=1, max_length=128)
    op: Literal["<", "<=", ">", ">=", "==", "!="]
    value: float | int | str | bool


class PlannedTask(Model):
    """One task of a drafted plan; the coder writes its job later."""

    task_id: str = Field(pattern=TASK_ID_PATTERN)
    priority: Priority = "MEDIUM"
    action: str = Field(min_length=1, max_length=4000)
    acceptance_criteria: list[str] = Field(min_length=1, max_length=20)
    dependencies: list[str] = Field(default_factory=list[str], max_length=50)
    checks: list[PlannedCheck] = Field(default_factory=list[PlannedCheck], max_length=20)
    inputs: list[str] = Field(default_factory=list[str], max_length=50)
    """Names of the goal's data files this task reads."""
    rationale: str = Field(default="", max_length=2000)
    complexity: Complexity | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="light: a short job on small data, one reviewer suffices; full: anything "
                    "larger or riskier. Leave out when unsure.")
    hypothesis: SkipJsonSchema[str | None] = Field(default=None,
                                                   exclude_if=lambda v: v is None)
    """The hypothesis this task's verified metrics are evidence for (a study's cycle only:
    see :class:`StudyPlannedTask`). Left out of the schema and of the dump when unset, so a
    plan without hypotheses asks and records exactly as before."""
    reuse: SkipJsonSchema[list[str]] = Field(default_factory=list[str],
                                             exclude_if=lambda v: not v)
    """Earlier cycles' tasks (``c1.data``) whose verified artifacts this task reads (a study's
    cycle only, like ``hypothesis``)."""


class PlannedTest(Model):
    """What decides a proposed hypothesis: a metric a task reports, compared with a value."""

    metric: str = Field(min_length=1, max_length=128)
    op: Literal["<", "<=", ">", ">=", "==", "!="]
    threshold: float | int | str | bool
    task_id: str | None = Field(default=None, pattern=TASK_ID_PATTERN)
    """The one task whose metric decides (none: every task linked to the hypothesis)."""


class PlannedHypothesis(Model):
    """A hypothesis the planner proposes for a study's cycle (always open: never a verdict)."""

    id: str = Field(pattern=TASK_ID_PATTERN)
    parent: str | None = Field(default=None, pattern=TASK_ID_PATTERN)
    statement: str = Field(min_length=1, max_length=STATEMENT_CHARS)
    test: PlannedTest = Field(description="Judged by the study on the metric a linked task "
                              "reports (with its interval when it has one); not a check of "
                              "any task.")


MAX_PLANNED_HYPOTHESES = 20
"""Hypotheses one drafted plan may propose."""
MAX_REUSED = 20
"""Earlier cycles' tasks one drafted task may reuse (as ``Decision.reuse``)."""


class PlanDraftOutput(Model):
    """The planner's answer: a plan in the ``pending_actions.json`` schema, without jobs."""

    context: str = Field(default="", max_length=4000)
    tasks: list[PlannedTask] = Field(min_length=1, max_length=30)
    hypotheses: SkipJsonSchema[list[PlannedHypothesis]] = Field(
        default_factory=list[PlannedHypothesis], exclude_if=lambda v: not v)
    """Proposed hypotheses (a study's cycle only: see :class:`StudyPlanDraftOutput`)."""


CHECKS_ARE_NOT_TESTS = (
    "Checks of the task's own correctness (rows read, folds run, no missing values left); "
    "never the test of its hypothesis: a job that reports a refuted hypothesis's metric has "
    "done its work, a failed check has not.")
REPORTS_THE_TEST = (
    "The hypothesis this task is evidence for: the task REPORTS its test's metric in "
    "metrics.json under the test's exact name; the study judges the test, not a check.")


class StudyPlannedTask(PlannedTask):
    """A task of a study's cycle: it may say which hypothesis it is evidence for.

    Its schema tells a hypothesis's test apart from the task's checks (the descriptions):
    a test written as a check would fail the task when the hypothesis is refuted.
    """

    checks: list[PlannedCheck] = Field(default_factory=list[PlannedCheck], max_length=20,
                                       description=CHECKS_ARE_NOT_TESTS)
    hypothesis: str | None = Field(default=None, pattern=TASK_ID_PATTERN,
                                   exclude_if=lambda v: v is None,
                                   description=REPORTS_THE_TEST)
    reuse: list[str] = Field(default_factory=list[str], max_length=MAX_REUSED,
                             exclude_if=lambda v: not v)
    """Earlier cycles' completed tasks (``c<cycle>.<task_id>``, e.g. ``c1.data``) whose
    verified artifacts this task reads at ``deps/c1.data/<file>``, instead of running them
    again (checked against the study in ``plan_from_draft``)."""


class StudyPlanDraftOutput(PlanDraftOutput):
    """The planner's answer in a study: the plan, the hypotheses it tests and their links.

    The schema offered to the planner of a study's cycle; a run outside a study is offered
    :class:`PlanDraftOutput`, whose schema is as it always was.
    """

    tasks: list[StudyPlannedTask] = Field(  # pyright: ignore[reportIncompatibleVariableOverride]
        min_length=1, max_length=30)
    """Read only as :class:`PlannedTask` (narrowed here for the schema, never written)."""
    hypotheses: list[PlannedHypothesis] = Field(default_factory=list[PlannedHypothesis],
                                                max_length=MAX_PLANNED_HYPOTHESES,
                                                exclude_if=lambda v: not v)
