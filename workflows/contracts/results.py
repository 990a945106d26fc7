"""Results and inputs of the two workflows: tasks, runs, provenance, progress.

A run's workflow result (:class:`ResearchResult`) stays small: status, counts, each task's
status and reason, report paths and the goal's answer. The full detail of every task (its
artifacts, checks, verdicts, provenance and output tails) is in the run's report, whose
results JSON is a :class:`RunReport`; ``workflows.contracts.bounds`` says how big each may be.
A task's :class:`Provenance` and :class:`PhaseMark` live in ``workflows.contracts.provenance``
and are exported here too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from workflows.contracts.alternatives import BranchSpec
from workflows.contracts.base import Model, PlainText
from workflows.contracts.branches import BranchRequest, BranchTree, SweepTable, TaskStart
from workflows.contracts.checkpoints import CheckpointList
from workflows.contracts.context import TaskDigest
from workflows.contracts.execution import (
    Artifact,
    CheckResult,
    DependencyArtifact,
    EventScope,
    ExecutionOutcome,
    RunStatus,
    TaskStatus,
)
from workflows.contracts.gates import GateRecord
from workflows.contracts.goal import DataFile, RunAnswer
from workflows.contracts.kpis import Kpis
from workflows.contracts.memory import ReflectionSummary, RememberAnswer, TaskAdvice
from workflows.contracts.packing import ChunkedPlan
from workflows.contracts.plan import Decision, JobSpec, Plan, PriorityScore
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.provenance import PHASE_MARKS as PHASE_MARKS
from workflows.contracts.provenance import AppliedPatch as AppliedPatch
from workflows.contracts.provenance import ApprovalProvenance as ApprovalProvenance
from workflows.contracts.provenance import PhaseAttempts as PhaseAttempts
from workflows.contracts.provenance import PhaseMark, Provenance
from workflows.contracts.reflection import ReflectionNote
from workflows.contracts.report_files import KeptArtifact as KeptArtifact
from workflows.contracts.report_files import ReportFiles as ReportFiles
from workflows.contracts.skills import (
    MAX_GUIDELINES,
    GuidelineRef,
    SkillReport,
    SkillSummary,
    SkillUse,
)
from workflows.contracts.spend import Budget, ModelSpend
from workflows.contracts.study import StudyContext
from workflows.contracts.verdicts import ReviewVerdict


class TaskInput(Model):
    """Input of a TaskWorkflow."""

    run_id: str
    decision: Decision
    queues: Queues = Field(default_factory=Queues)
    policy: RunPolicy = Field(default_factory=RunPolicy)
    dependency_artifacts: list[DependencyArtifact] = Field(
        default_factory=list[DependencyArtifact]
    )
    upstream: list[TaskDigest] = Field(default_factory=list[TaskDigest])
    """What the tasks this one depends on found, for its coder (``workflows.research.context``)."""
    goal: PlainText | None = None
    data: list[DataFile] = Field(default_factory=list[DataFile])
    """The goal's data files this task reads (with their first lines, for the coder)."""
    budget: Budget | None = None
    """The run's model budget left when this task started (None: unlimited)."""
    memory: TaskAdvice | None = None
    skill: SkillUse | None = None
    """The skill that supplied this task's job at intake."""
    guidelines: list[GuidelineRef] = Field(default_factory=list[GuidelineRef],
                                           max_length=MAX_GUIDELINES)
    """Guideline skills matched to the task at intake (ids and scores) for its prompts."""
    planned_with: list[str] = Field(default_factory=list[str], max_length=MAX_GUIDELINES)
    """Guideline skills that went into the prompt of the planner that planned this task."""
    """What memory changed for this task at intake (rules applied, template used)."""
    branch: str | None = None
    """The branch this task runs in (none: the run's main line)."""
    start: TaskStart | None = None
    """The checkpoint a branch's branch-point task starts from (none: intake)."""
    parent_event: EventScope | None = None
    """The run's event that handed this task over: the task's events nest under it."""

    def scope(self) -> str:
        """The task's id within its run: ``3``, or ``3.branch-NAME`` in a branch.

        The sandbox's working directory, the task's events and its detail file use it.
        """
        return scoped(self.decision.task_id, self.branch)


def scoped(task_id: str, branch: str | None) -> str:
    """A task's id within its run: ``task_id`` in the main line, ``ID.branch-NAME`` in one."""
    return f"{task_id}.branch-{branch}" if branch else task_id


class TaskOutline(Model):
    """How one task ended, in a few fields: what a run's result and the report share."""

    task_id: str
    priority: str = "MEDIUM"
    action: PlainText = ""
    status: TaskStatus
    status_reason: str
    attempts_total: int = 0


class TaskResult(TaskOutline):
    """Final state of one task."""

    artifacts: list[Artifact] = Field(default_factory=list[Artifact])
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    checks: list[CheckResult] = Field(default_factory=list[CheckResult])
    execution: ExecutionOutcome | None = None
    verdicts: list[ReviewVerdict] = Field(default_factory=list[ReviewVerdict])
    reflections: list[ReflectionNote] = Field(default_factory=list[ReflectionNote])
    provenance: Provenance = Field(default_factory=Provenance)
    model: ModelSpend = Field(default_factory=ModelSpend)
    learned: RememberAnswer | None = None
    """What memory learned from this task (episodes, rules, templates)."""
    skill_report: SkillReport | None = None
    """The outcome handed to the skill library, and its deviation from the skill's promise."""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    artifacts_total: int = 0
    """How many artifacts were verified; ``artifacts`` lists at most
    ``bounds.LISTED_ARTIFACTS`` of them (0 in results older than the cap: count ``artifacts``)."""
    omitted: list[str] = Field(default_factory=list[str])
    """What was cut from this result to keep it small, and where the rest is."""
    detail: str = ""
    """The file the task wrote its full, uncut result to (empty: none was written)."""
    phases: list[PhaseMark] = Field(default_factory=list[PhaseMark])
    """The phases the task went through and when it entered each (empty in older results)."""
    job: JobSpec | None = None
    """The job as it last ran (or was last reviewed): a branch from ``execute`` starts from it
    (none in older results, or when it was too large to keep)."""
    branch: str | None = None
    """The branch the task ran in (none: the run's main line)."""
    branches_asked: list[BranchSpec] = Field(default_factory=list[BranchSpec])
    """Branches a person asked for at the task's error gate instead of a retry."""

    def artifact_count(self) -> int:
        """How many artifacts the task verified, listed or not."""
        return max(self.artifacts_total, len(self.artifacts))


class TaskSummary(TaskOutline):
    """One task in a run's workflow result: how it ended and why (its detail is in the report)."""

    artifact_count: int = 0


class ParentLink(Model):
    """What a run that branches from a closed run takes from it.

    ``reused`` are the closed run's task results (verified artifacts passed by reference);
    none of those tasks runs again. ``request`` is the branch request the new run starts with.
    """

    run_id: str
    reused: list[TaskResult] = Field(default_factory=list[TaskResult])
    request: BranchRequest


class ResearchInput(ChunkedPlan):
    """Input of a ResearchWorkflow: a resolved plan (see ``workers.intake.planfile``), or a goal.

    With a ``goal`` and no ``plan`` the run plans first (planner and plan reviewer), or
    waits for a person's plan (``assay plan``), or ends deferred, by ``policy.agents``.
    ``plan_sha256`` is then the digest of the goal and its data.
    """

    run_id: str
    plan_name: str
    plan_sha256: str
    plan: Plan | None = None
    goal: PlainText | None = None
    data: list[DataFile] = Field(default_factory=list[DataFile])
    policy: RunPolicy = Field(default_factory=RunPolicy)
    queues: Queues = Field(default_factory=Queues)
    parent: ParentLink | None = None
    """A run started to branch from a closed run: the closed run's line is reused whole."""
    study: StudyContext | None = None
    """The study this run is a cycle of, and where it stands (for the planner)."""
    earlier: list[DependencyArtifact] = Field(default_factory=list[DependencyArtifact],
                                              max_length=2000)
    """Earlier cycles' verified artifacts the plan's tasks reuse (``Decision.reuse``; their
    ``task_id`` is the reference, ``c1.data``), resolved by the study."""
    answer_format: PlainText | None = None
    """The format the goal's answer must take (``@mean_age[mean_age], rounded to two decimal
    places``): the output processor then also writes its answer so, citing verified metrics."""


class PlanSource(Model):
    """A plan a person supplied for a goal run: its digest and who supplied it."""

    sha256: str
    by: str = ""
    name: str = ""




class ReportPaths(Model):
    """Where a run's report files were written."""

    results_json: str
    summary_md: str
    ledger: str = ""
    results_sha256: str = ""
    """The results JSON as put in the artifact store (empty: not stored); a machine that
    cannot read ``results_json`` reads it by this digest."""
    summary_sha256: str = ""
    """The Markdown summary as put in the artifact store (empty: not stored)."""


class RunBase(Model):
    """What a run's workflow result and its report share: how the run went as a whole."""

    run_id: str
    plan_name: str
    plan_sha256: str
    status: RunStatus
    timestamp: str
    """The report's timestamp: the run's start in workflow time, so a rewritten report (a
    retried activity or workflow task) replaces its files instead of adding new ones."""
    started_at: datetime
    finished_at: datetime
    task_counts: dict[str, int] = Field(default_factory=dict[str, int])
    """How many tasks ended with each status."""
    completion_by_priority: dict[str, dict[str, float]] = Field(
        default_factory=dict[str, dict[str, float]]
    )
    gates: list[GateRecord] = Field(default_factory=list[GateRecord])
    goal: PlainText | None = None
    status_reason: str = ""
    plan: Plan | None = None
    """The plan that ran: the planner's for a goal, or a supplied plan memory changed."""
    answer: RunAnswer | None = None
    """The output processor's answer to the goal."""
    model: ModelSpend = Field(default_factory=ModelSpend)
    """Model calls, tokens and cost of the whole run (planning, tasks, summary)."""
    reflection: ReflectionSummary = Field(default_factory=ReflectionSummary)
    skills: SkillSummary = Field(default_factory=SkillSummary)
    """Patterns found, patches and their success, rules and templates learned or used."""
    report: ReportPaths | None = None
    supplied_plan: PlanSource | None = None
    """The plan a person supplied (``assay plan RUN FILE --by NAME``); ``plan_sha256`` stays
    the digest of the goal and its data."""
    branches: BranchTree | None = None
    """The run's branches, how they compared and which line was kept (none: no branch)."""
    checkpoints: CheckpointList | None = None
    """The run's named checkpoints (none: it has none)."""
    parent: str = ""
    """The closed run this one branched from (``assay branch`` on a closed run)."""

    def run_fields(self) -> dict[str, Any]:
        """The fields every run's result and report share, to build one from the other."""
        return {name: getattr(self, name) for name in RunBase.model_fields}


class ResearchResult(RunBase):
    """A run's workflow result: small whatever the run's size (the detail is in its report).

    Results of runs older than the cap carried each task's whole result under ``tasks``;
    they still read as summaries.
    """

    tasks: list[TaskSummary] = Field(default_factory=list[TaskSummary])
    """Each task's status and reason (empty when even that did not fit: see ``omitted``)."""
    omitted: list[str] = Field(default_factory=list[str])
    """What was left out of this result to keep it under its limit (all of it is in the
    report)."""


class RunReport(RunBase):
    """A run's report: its results JSON, with every task's full result."""

    tasks: list[TaskResult] = Field(default_factory=list[TaskResult])
    dependencies: dict[str, list[str]] = Field(default_factory=dict[str, list[str]])
    """Each task's dependencies in the plan that ran (the report's DAG)."""
    priority_scores: dict[str, PriorityScore] = Field(default_factory=dict[str, PriorityScore])
    """The computed priority of each task the plan gave none (score, level, reasons)."""
    estimated_s: dict[str, float] = Field(default_factory=dict[str, float])
    """Each task's time estimate in the plan, in seconds (``workflows.contracts.kpis``)."""
    kpis: Kpis | None = None
    """The planning KPIs, computed as the report is written."""
    files: ReportFiles = Field(default_factory=ReportFiles)
    execution: str = ""
    """The Temporal run id of the run's execution that wrote this report (empty in older
    reports)."""
    first_execution: str = ""
    """The run id of the run's first execution: another one when this execution is a
    ``temporal workflow reset`` of it."""

    def reset(self) -> bool:
        """Whether a reset execution (not the run's first) wrote this report."""
        return bool(self.execution and self.first_execution
                    and self.execution != self.first_execution)
    sweeps: list[SweepTable] = Field(default_factory=list[SweepTable])
    """Each group of branches as one table of every line (written with the report)."""
    answer_by: str = ""
    """Who wrote ``answer``: the output processor, or the verified evidence alone (no model)."""
    answer_unheld: list[str] = Field(default_factory=list[str])
    """Numbers of a model-written ``answer`` that no verified metric holds
    (``activities.reports.claims``)."""


class WriteReportInput(Model):
    """Input of the ``write_report`` activity (a local activity: never in history)."""

    report: RunReport


class WriteTaskReportInput(Model):
    """Input of the ``write_task_report`` activity: a task's full, uncut result."""

    run_id: str
    result: TaskResult


class TaskProgress(Model):
    """Answer of a TaskWorkflow's ``progress`` query."""

    task_id: str
    phase: str
    status: TaskStatus
    attempts: dict[str, int] = Field(default_factory=dict[str, int])
    waiting: GateRecord | None = None
    approvers: list[str] = Field(default_factory=list[str])
    """Who may decide the waiting gate (empty: anyone)."""


class RunProgress(Model):
    """Answer of a ResearchWorkflow's ``progress`` query."""

    run_id: str
    phase: str
    status: RunStatus
    tasks: dict[str, TaskStatus] = Field(default_factory=dict[str, TaskStatus])
    order: list[str] = Field(default_factory=list[str])
    waiting: GateRecord | None = None
    approvers: list[str] = Field(default_factory=list[str])
    """Who may decide the waiting gate (empty: anyone)."""
    decided: list[GateRecord] = Field(default_factory=list[GateRecord])
    """The run's own gates as settled: by whom, when, their comment and channel."""
    refused: list[str] = Field(default_factory=list[str])
    """The latest decisions and requests the run refused (who: why), oldest first."""
    spent_usd: float = 0.0
    """What the run's model calls have cost so far (a running task's once it ends)."""
    hypotheses: list[str] = Field(default_factory=list[str])
    """The hypotheses its plan tests (a study's cycle; empty before it has a plan)."""
    batch: str | None = None
    """The workflow ID of the batch of tasks running now (a run of over 1 000 tasks)."""


class SuppliedPlan(Model):
    """A person's plan for a goal run waiting for one (``assay plan RUN FILE``)."""

    plan_name: str
    plan_sha256: str
    plan: Plan
    by: PlainText = ""


def outline_report(result: ResearchResult) -> RunReport:
    """A report made from the run's result alone: each task's status and reason, no detail."""
    missing = "its detail: the results JSON could not be read on this machine"
    tasks = [TaskResult(task_id=t.task_id, priority=t.priority, action=t.action,
                        status=t.status, status_reason=t.status_reason,
                        attempts_total=t.attempts_total, artifacts_total=t.artifact_count,
                        omitted=[missing])
             for t in result.tasks]
    return RunReport(**result.run_fields(), tasks=tasks)
