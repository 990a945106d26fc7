"""Results and inputs of the two workflows: tasks, runs, provenance, progress.

These carry everything a report needs, so a run's result is its results JSON.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.agents.roles import DataFile, RunAnswer
from workflows.agents.spend import Budget, ModelSpend
from workflows.contracts.base import Model
from workflows.contracts.execution import (
    Artifact,
    CheckResult,
    DependencyArtifact,
    ExecutionOutcome,
    TaskStatus,
)
from workflows.contracts.executive import GateRecord, PatchChange, ReflectionNote, ReviewVerdict
from workflows.contracts.memory import ReflectionSummary, RememberAnswer, TaskAdvice
from workflows.contracts.plan import Decision, Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.library.contracts import SkillReport, SkillSummary, SkillUse


class PhaseAttempts(Model):
    """Attempts spent in one phase."""

    attempts: int = 0


class ApprovalProvenance(PhaseAttempts):
    """How the task got past its approval gate."""

    approved_after_patch: bool = False
    decided_by: list[str] = Field(default_factory=list[str])


class AppliedPatch(Model):
    """A patch offered by reflection, where it was used and what came of it."""

    patch_id: str
    phase: str
    root_cause: str
    changes: list[PatchChange] = Field(default_factory=list[PatchChange])
    risk: float = 0.0
    confidence: float = 0.0
    sha256: str = ""
    decision: str = ""
    outcome: str = "pending"


class Provenance(Model):
    """Where a task's result came from (seed Phase 7 provenance record)."""

    approval: ApprovalProvenance = Field(default_factory=ApprovalProvenance)
    execution: PhaseAttempts = Field(default_factory=PhaseAttempts)
    verification: PhaseAttempts = Field(default_factory=PhaseAttempts)
    artifacts: list[str] = Field(default_factory=list[str])
    checksums: dict[str, str] = Field(default_factory=dict[str, str])
    job_source: str = ""
    job_sha256: str = ""
    workflow_id: str = ""
    patches: list[AppliedPatch] = Field(default_factory=list[AppliedPatch])
    reflection_ids: list[str] = Field(default_factory=list[str])
    reflection_misses: int = 0
    approvals: list[GateRecord] = Field(default_factory=list[GateRecord])
    job_author: str = "plan"
    """Who wrote the job that ran: ``plan``, ``coder:fast``, ``coder:deep``,
    ``debugger:<strategy>``, ``template:<id>`` (a procedural template from memory) or
    ``skill:<id>`` (a pattern of the skill library)."""
    memory_rules: list[str] = Field(default_factory=list[str])
    """Semantic rules applied to the job at intake."""
    template_id: str | None = None
    """The procedural template the job came from."""
    skill: SkillUse | None = None
    """The skill the job came from (``job_author`` ``skill:<id>``), with its parameters."""


class TaskInput(Model):
    """Input of a TaskWorkflow."""

    run_id: str
    decision: Decision
    queues: Queues = Field(default_factory=Queues)
    policy: RunPolicy = Field(default_factory=RunPolicy)
    dependency_artifacts: list[DependencyArtifact] = Field(
        default_factory=list[DependencyArtifact]
    )
    goal: str | None = None
    data: list[DataFile] = Field(default_factory=list[DataFile])
    """The goal's data files this task reads (with their first lines, for the coder)."""
    budget: Budget | None = None
    """The run's model budget left when this task started (None: unlimited)."""
    memory: TaskAdvice | None = None
    skill: SkillUse | None = None
    """The skill that supplied this task's job at intake."""
    """What memory changed for this task at intake (rules applied, template used)."""


class TaskResult(Model):
    """Final state of one task."""

    task_id: str
    priority: str = "MEDIUM"
    action: str = ""
    status: TaskStatus
    status_reason: str
    attempts_total: int = 0
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


class ResearchInput(Model):
    """Input of a ResearchWorkflow: a resolved plan (see ``workers.intake.planfile``), or a goal.

    With a ``goal`` and no ``plan`` the run plans first (planner and plan reviewer), or
    waits for a person's plan (``assay plan``), or ends deferred, by ``policy.agents``.
    ``plan_sha256`` is then the digest of the goal and its data.
    """

    run_id: str
    plan_name: str
    plan_sha256: str
    plan: Plan | None = None
    goal: str | None = None
    data: list[DataFile] = Field(default_factory=list[DataFile])
    policy: RunPolicy = Field(default_factory=RunPolicy)
    queues: Queues = Field(default_factory=Queues)


RunStatus = Literal["running", "waiting", "completed", "partial", "failed", "rejected",
                    "deferred"]


class ReportPaths(Model):
    """Where a run's report files were written."""

    results_json: str
    summary_md: str
    ledger: str = ""


class ResearchResult(Model):
    """Final state of a run: the results JSON of the report."""

    run_id: str
    plan_name: str
    plan_sha256: str
    status: RunStatus
    timestamp: str
    started_at: datetime
    finished_at: datetime
    tasks: list[TaskResult]
    completion_by_priority: dict[str, dict[str, float]] = Field(
        default_factory=dict[str, dict[str, float]]
    )
    gates: list[GateRecord] = Field(default_factory=list[GateRecord])
    goal: str | None = None
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


class WriteReportInput(Model):
    """Input of the ``write_report`` activity."""

    result: ResearchResult


class TaskProgress(Model):
    """Answer of a TaskWorkflow's ``progress`` query."""

    task_id: str
    phase: str
    status: TaskStatus
    attempts: dict[str, int] = Field(default_factory=dict[str, int])
    waiting: GateRecord | None = None


class RunProgress(Model):
    """Answer of a ResearchWorkflow's ``progress`` query."""

    run_id: str
    phase: str
    status: RunStatus
    tasks: dict[str, TaskStatus] = Field(default_factory=dict[str, TaskStatus])
    order: list[str] = Field(default_factory=list[str])
    waiting: GateRecord | None = None


class SuppliedPlan(Model):
    """A person's plan for a goal run waiting for one (``assay plan RUN FILE``)."""

    plan_name: str
    plan_sha256: str
    plan: Plan
    by: str = ""
