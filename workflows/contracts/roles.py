"""Contracts of the agent roles: what each is asked, and the typed answer it gives back.

Each role is one activity on the agents pool (declared in :mod:`workflows.catalogue`). Its
request carries the facts the role needs, the budget left and the run's recording; its answer
carries the validated output and what the call spent. The ``*Output`` models are the
structured answers the model must fill in (their JSON schemas are the tools offered); the
activities turn them into the workflow's own types (``JobSpec``, ``ReviewVerdict``, a ``Plan``).

Prompts never see run or workflow ids, times or absolute paths, so the same goal on the same
data asks the same questions, and a recording answers a re-run.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workflows.contracts.base import MAX_GOAL_CHARS as MAX_GOAL_CHARS
from workflows.contracts.base import Model
from workflows.contracts.context import TaskDigest
from workflows.contracts.drafts import TASK_ID_PATTERN as TASK_ID_PATTERN
from workflows.contracts.drafts import PlanDraftOutput
from workflows.contracts.drafts import PlannedCheck as PlannedCheck
from workflows.contracts.drafts import PlannedHypothesis as PlannedHypothesis
from workflows.contracts.drafts import PlannedTask as PlannedTask
from workflows.contracts.drafts import PlannedTest as PlannedTest
from workflows.contracts.drafts import StudyPlanDraftOutput as StudyPlanDraftOutput
from workflows.contracts.drafts import StudyPlannedTask as StudyPlannedTask
from workflows.contracts.environments import NAME_PATTERN
from workflows.contracts.execution import DependencyArtifact, ExecutionOutcome
from workflows.contracts.goal import DATA_HEAD_CHARS as DATA_HEAD_CHARS
from workflows.contracts.goal import DataFile as DataFile
from workflows.contracts.goal import RunAnswer as RunAnswer
from workflows.contracts.hypotheses import MAX_HYPOTHESES
from workflows.contracts.patterns import MAX_GUIDELINES, GuidelineRef
from workflows.contracts.plan import Check, JobSpec
from workflows.contracts.policy import ModelRecording
from workflows.contracts.spend import Budget, Spend
from workflows.contracts.study import StudyContext
from workflows.contracts.verdicts import Reviewer, ReviewInput, ReviewVerdict, Verdict

MAX_CODE_CHARS = 60_000
ARTIFACT_PATTERN = r"^(?!/)(?!.*(^|/)\.\.(/|$))[A-Za-z0-9_.][A-Za-z0-9_./-]{0,199}$"


class AgentRequest(Model):
    """Fields every role request carries; only the guidelines reach a prompt (as loaded text)."""

    run_id: str
    task_id: str | None = None
    budget: Budget | None = None
    recording: ModelRecording | None = None
    guidelines: list[GuidelineRef] = Field(default_factory=list[GuidelineRef],
                                           max_length=MAX_GUIDELINES)
    """Matched guideline skills (ids and scores): the activity loads their text."""


class RoleAnswer(Model):
    """Fields every role answer carries: what the call spent, the guidelines it was given."""

    spend: Spend
    guidelines: list[str] = Field(default_factory=list[str])
    """Ids of the guideline skills that went into the prompt (within its budget)."""



# --- planner and plan reviewer ---------------------------------------------------------------


class PlanRequest(AgentRequest):
    """Input of ``plan_goal``."""

    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    data: list[DataFile] = Field(default_factory=list[DataFile])
    memory: list[str] = Field(default_factory=list[str])
    """What earlier runs taught: memory's rules and episodes that apply to the goal."""
    previous: PlanDraftOutput | None = None
    """The draft a plan reviewer (or validation) sent back, with ``feedback``."""
    feedback: list[str] = Field(default_factory=list[str])
    study: StudyContext | None = None
    """The study this plan is a cycle of, and where it stands (none: a run of its own)."""


class PlanAnswer(RoleAnswer):
    """Result of ``plan_goal``."""

    draft: PlanDraftOutput


class PlanReviewOutput(Model):
    """The plan reviewer's answer."""

    verdict: Verdict
    concerns: list[str] = Field(default_factory=list[str], max_length=20)
    """What must change before the plan can run (empty when approved)."""
    reasoning: str = Field(default="", max_length=4000)


class PlanReviewRequest(AgentRequest):
    """Input of ``review_plan``."""

    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    data: list[DataFile] = Field(default_factory=list[DataFile])
    draft: PlanDraftOutput
    study: StudyContext | None = None
    """The study the plan is a cycle of, as its planner saw it (none: a run of its own)."""


class PlanReviewAnswer(RoleAnswer):
    """Result of ``review_plan``."""

    review: PlanReviewOutput


# --- coder --------------------------------------------------------------------------------


class ResourcesOutput(Model):
    """Limits the coder asks for (the reviewers hold them to policy)."""

    memory_mb: int = Field(default=1024, ge=16, le=262_144)
    timeout_s: float = Field(default=600.0, gt=0, le=7 * 24 * 3600)


class JobOutput(Model):
    """The coder's (or a debugger's) job: one Python script and what it promises to leave."""

    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    args: dict[str, float | int | str | bool] = Field(default_factory=dict[str, Any])
    expected_artifacts: list[str] = Field(
        default_factory=list[str], max_length=50,
        json_schema_extra={"items": {"type": "string", "pattern": ARTIFACT_PATTERN}})
    expected_metrics: list[str] = Field(default_factory=list[str], max_length=50)
    resources: ResourcesOutput = Field(default_factory=ResourcesOutput)
    requirements: list[str] = Field(default_factory=list[str], max_length=30)
    environment: str | None = Field(default=None, max_length=40, pattern=NAME_PATTERN)
    """A named environment the job runs in (one the prompt lists); none: the run's."""
    reasoning: str = Field(default="", max_length=4000)
    confidence: float = Field(default=0.5, ge=0, le=1)


class EnvironmentFacts(Model):
    """The job interpreter: Python version and installed distributions (name -> version)."""

    python: str = ""
    packages: dict[str, str] = Field(default_factory=dict[str, str])
    environment: str = ""
    """``science@1a2b3c4d5e6f`` when the job runs in a provisioned environment (its packages
    are then the environment's); empty for the worker's own interpreter."""


class CodeRequest(AgentRequest):
    """Input of ``write_job``: the fast path first, the deep path after a failure."""

    mode: Literal["fast", "deep"] = "fast"
    goal: str | None = None
    action: str
    acceptance_criteria: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    input_names: list[str] = Field(default_factory=list[str])
    dependency_artifacts: list[str] = Field(default_factory=list[str])
    data: list[DataFile] = Field(default_factory=list[DataFile])
    """The data files this task reads, with their first lines."""
    previous_job: JobSpec | None = None
    feedback: list[str] = Field(default_factory=list[str])
    """Why the previous job failed (review findings, execution failure), for the deep path."""
    environment: EnvironmentFacts | None = None
    upstream: list[TaskDigest] = Field(default_factory=list[TaskDigest])
    """What each task this one depends on found (``workflows.contracts.context``)."""
    reused: list[DependencyArtifact] = Field(default_factory=list[DependencyArtifact])
    """The verified artifacts of the earlier cycles' tasks this one reuses (``c1.data``)."""
    instructions: str = ""
    """The instructions of the subagent the task runs as (bounded at match), else empty."""


class CodeAnswer(RoleAnswer):
    """Result of ``write_job``: a job spec ready for review (``source`` and ``filename`` set)."""

    job: JobSpec
    reasoning: str = ""
    confidence: float = 0.5


# --- model reviewers -----------------------------------------------------------------------


class ModelReviewOutput(Model):
    """A model reviewer's answer, on top of the deterministic verdict it was shown."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    critical: list[str] = Field(default_factory=list[str], max_length=20)
    """Problems that must stop the job from running (empty to approve)."""
    warnings: list[str] = Field(default_factory=list[str], max_length=20)
    reasoning: str = Field(default="", max_length=4000)


DebugStrategy = Literal["direct", "introspect", "diagnostic"]
DEBUG_STRATEGIES: tuple[DebugStrategy, ...] = ("direct", "introspect", "diagnostic")


class DebugFix(Model):
    """What a model reviewer of a debugger's fix is told: who wrote it, and what it answers."""

    strategies: list[DebugStrategy] = Field(min_length=1)
    """The debuggers whose fix this is (several when they wrote the same code)."""
    diagnosis: str = ""
    """The debugger's own account of the cause."""
    failure: ExecutionOutcome
    """How the job it fixes failed, as the debuggers saw it."""


class ModelReviewRequest(AgentRequest):
    """Input of ``review_job_model``.

    ``fix`` is set when the job is a debugger's fix of a failed one; a first job has none.
    """

    reviewer: Reviewer
    review: ReviewInput
    deterministic: ReviewVerdict
    fix: DebugFix | None = None
    environment: EnvironmentFacts | None = None
    """The packages of the environment the job runs in, when the task holds them."""


class ModelReviewAnswer(RoleAnswer):
    """Result of ``review_job_model``: the model's verdict as a ``ReviewVerdict``."""

    verdict: ReviewVerdict


# --- debuggers ----------------------------------------------------------------------------

class DiagnosticOutput(Model):
    """A diagnostic script the ``diagnostic`` debugger wants run before it proposes a fix."""

    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    purpose: str = Field(default="", max_length=2000)


class DebugOutput(Model):
    """A debugger's fix: the whole corrected script and what went wrong."""

    diagnosis: str = Field(min_length=1, max_length=4000)
    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    requirements: list[str] | None = Field(default=None, max_length=30)
    """None keeps the job's requirements."""
    confidence: float = Field(ge=0, le=1)


class DebugRequest(AgentRequest):
    """Input of ``debug_job``.

    For ``diagnostic`` without ``diagnostic_output`` the answer is a diagnostic script to
    run; with it, a fix. The other strategies answer with a fix straight away.
    """

    strategy: DebugStrategy
    action: str
    acceptance_criteria: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    input_names: list[str] = Field(default_factory=list[str])
    job: JobSpec
    outcome: ExecutionOutcome
    environment: EnvironmentFacts | None = None
    diagnostic_output: str | None = None
    diagnostic_script: str | None = None
    """The script the diagnostic debugger wrote in its first stage (set with its output)."""
    diagnostic_purpose: str = ""
    """What that debugger said its script would tell it."""


class DebugAnswer(RoleAnswer):
    """Result of ``debug_job``: a patched job, or a diagnostic job to run first."""

    strategy: DebugStrategy
    job: JobSpec | None = None
    diagnostic_job: JobSpec | None = None
    diagnosis: str = ""
    confidence: float = 0.0


# --- output processor ---------------------------------------------------------------------


class SummaryRequest(AgentRequest):
    """Input of ``summarize_run``."""

    goal: str
    tasks: list[TaskDigest]
    data: list[DataFile] = Field(default_factory=list[DataFile])
    """The goal's data files, whose profiles the activity shows."""
    answer_format: str | None = None
    """The format the goal names for its answer (``@name[value]`` fields), else None."""
    study: StudyContext | None = Field(default=None, exclude_if=lambda v: v is None)
    """In a study's cycle, what its answer is judged by: the cycle and the limit, the
    acceptance criteria and the key metric, and the hypothesis tree with this plan's
    proposals joined (no earlier cycles' summaries; :func:`workflows.research.context.
    study_facts`). None for a run of its own, whose request stays as it always was."""
    testing: list[str] = Field(default_factory=list[str], max_length=MAX_HYPOTHESES,
                               exclude_if=lambda v: not v)
    """The ids of the hypotheses of ``study``'s tree this cycle tests (its plan proposes
    them, or a task links to them)."""


class SummaryAnswer(RoleAnswer):
    """Result of ``summarize_run``."""

    answer: RunAnswer
