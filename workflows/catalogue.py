"""Every activity Assay runs, declared once: name, types, pool, timeouts and retry policy.

Workflows call activities only through these declarations (``await EXECUTE_JOB.run(req,
queues=...)``), so each call is type-checked and "go to definition" lands here rather than on
a string. Implementations take their name from the declaration (``@EXECUTE_JOB.defn``), and
every worker checks at start that it registers exactly the declarations of its pool
(:func:`check_registrations`), so a pool can neither miss an activity nor serve a stray one.

Deterministic: imported by workflow code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar, cast

from temporalio import activity, workflow
from temporalio.common import RetryPolicy

from workflows.contracts import skills as library
from workflows.contracts import writing
from workflows.contracts.cycles import (
    CloseCycleInput,
    ResolveReuseInput,
    StudyReportInput,
    SynthesisAnswer,
    SynthesisRequest,
)
from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
from workflows.contracts.errors import PERMANENT
from workflows.contracts.execution import (
    DependencyArtifact,
    ExecuteJobInput,
    ExecutionOutcome,
    RecordEventsInput,
    Verification,
    VerifyEvidenceInput,
)
from workflows.contracts.judging import JudgeAnswer, JudgeRequest
from workflows.contracts.memory import (
    ConsultAnswer,
    ConsultInput,
    RememberAnswer,
    RememberInput,
    RememberTasksAnswer,
    RememberTasksInput,
)
from workflows.contracts.metadata import summary_line
from workflows.contracts.policy import Queues
from workflows.contracts.pools import Pool
from workflows.contracts.recall import RecallAnswer, RecallInput
from workflows.contracts.reflection import DiagnoseInput, ReflectionNote, RescanInput, RescanResult
from workflows.contracts.reflector import ReflectAnswer, ReflectRequest
from workflows.contracts.results import ReportPaths, WriteReportInput, WriteTaskReportInput
from workflows.contracts.roles import (
    CodeAnswer,
    CodeRequest,
    DebugAnswer,
    DebugRequest,
    EnvironmentFacts,
    ModelReviewAnswer,
    ModelReviewRequest,
    PlanAnswer,
    PlanRequest,
    PlanReviewAnswer,
    PlanReviewRequest,
    SummaryAnswer,
    SummaryRequest,
)
from workflows.contracts.spend import ModelAnswer, ModelCall
from workflows.contracts.study import StudyState
from workflows.contracts.verdicts import ReviewInput, ReviewVerdict

InT = TypeVar("InT")
OutT = TypeVar("OutT")
FnT = TypeVar("FnT", bound=Callable[..., Any])

DECLARATION_ATTR = "__assay_activity__"
"""Attribute :meth:`ActivityDecl.defn` sets on an implementation, naming its declaration."""


def retry(*, initial: timedelta = timedelta(seconds=1), maximum: timedelta | None = None,
          attempts: int = 0, backoff: float = 2.0) -> RetryPolicy:
    """A retry policy that never retries one of Assay's permanent error types."""
    return RetryPolicy(initial_interval=initial, backoff_coefficient=backoff,
                       maximum_interval=maximum, maximum_attempts=attempts,
                       non_retryable_error_types=list(PERMANENT))


@dataclass(frozen=True)
class ActivityDecl(Generic[InT, OutT]):
    """One activity: what it takes and returns, where it runs, how long it may take.

    Attributes:
        name: the activity type name (never changed: saved histories name it).
        arg: the type of its one argument (``None`` for an activity that takes none).
        result: the type of its result (the data converter decodes into it).
        pool: the worker pool that serves it.
        start_to_close: how long one attempt may take (a call may set a shorter or longer one).
        retry_policy: how failed attempts are retried.
        local: run as a local activity in the orchestration worker (saves a server round trip).
    """

    name: str
    arg: Any
    result: type[OutT]
    pool: Pool
    start_to_close: timedelta
    retry_policy: RetryPolicy
    local: bool = False

    def defn(self, fn: FnT) -> FnT:
        """Decorate the implementation: a Temporal activity of this name, tied to this entry."""
        setattr(fn, DECLARATION_ATTR, self)
        return activity.defn(name=self.name)(fn)

    async def run(self, arg: InT, *, queues: Queues | None = None,
                  start_to_close: timedelta | None = None,
                  schedule_to_close: timedelta | None = None,
                  heartbeat: timedelta | None = None, summary: str | None = None) -> OutT:
        """Run the activity from a workflow and return its decoded result.

        Args:
            arg: its argument (``None`` when the declaration takes none).
            queues: the run's task queues; the one of this declaration's pool is used.
                Omitted: the calling workflow's own task queue.
            start_to_close: overrides the declared per-attempt limit.
            schedule_to_close: a limit over all attempts (bounded advisory calls).
            heartbeat: the heartbeat timeout of a long activity.
            summary: what the Web UI's timeline shows for this call (``run job fit.py
                (attempt 2)``); made one line and cut to the server's limit here.
        """
        limit = start_to_close or self.start_to_close
        args = [] if arg is None else [arg]
        label = summary_line(summary) if summary else None
        if self.local:
            answer = await workflow.execute_local_activity(
                self.name, args=args, result_type=self.result, start_to_close_timeout=limit,
                schedule_to_close_timeout=schedule_to_close, retry_policy=self.retry_policy,
                summary=label)
        else:
            answer = await workflow.execute_activity(
                self.name, args=args, result_type=self.result,
                task_queue=None if queues is None else queue_of(queues, self.pool),
                start_to_close_timeout=limit, schedule_to_close_timeout=schedule_to_close,
                heartbeat_timeout=heartbeat, retry_policy=self.retry_policy, summary=label)
        return cast(OutT, answer)


def queue_of(queues: Queues, pool: Pool) -> str:
    """The task queue a run sends ``pool``'s activities to."""
    return cast(str, getattr(queues, pool.name.lower()))


def declaration_of(fn: Callable[..., Any]) -> ActivityDecl[Any, Any] | None:
    """The declaration an implementation was decorated with (``None``: undeclared)."""
    found = getattr(fn, DECLARATION_ATTR, None)
    return cast("ActivityDecl[Any, Any]", found) if isinstance(found, ActivityDecl) else None


class RegistrationError(Exception):
    """A worker's activities do not match the catalogue's declarations for its pool."""


def check_registrations(pool: Pool, implementations: Iterable[Callable[..., Any]],
                        catalogue: Iterable[ActivityDecl[Any, Any]] | None = None) -> None:
    """Refuse a pool whose implementations are not exactly the catalogue's for that pool.

    Raises:
        RegistrationError: naming every undeclared, misplaced, duplicated or missing activity.
    """
    expected = {d.name for d in (CATALOGUE if catalogue is None else catalogue)
                if d.pool is pool}
    problems: list[str] = []
    seen: set[str] = set()
    for fn in implementations:
        decl = declaration_of(fn)
        label = getattr(fn, "__qualname__", repr(fn))
        if decl is None:
            problems.append(f"{label} is not declared in the catalogue (decorate it with "
                            "the declaration's .defn)")
        elif decl.pool is not pool:
            problems.append(f"{decl.name} belongs to pool {decl.pool.value}, not {pool.value}")
        elif decl.name in seen:
            problems.append(f"{decl.name} is registered twice")
        else:
            seen.add(decl.name)
    problems += [f"{name} is declared for {pool.value} but not registered"
                 for name in sorted(expected - seen)]
    if problems:
        raise RegistrationError(f"pool {pool.value}: " + "; ".join(problems))


# --- the declarations ----------------------------------------------------------------------

QUICK = retry(attempts=5)
"""Short deterministic work on a healthy worker: a few retries ride out a restart."""
ADVISORY = retry(initial=timedelta(milliseconds=200), attempts=2)
"""Learning asked on a task's way (reflection, memory, skills): one retry, then go on without."""
MINUTE = timedelta(minutes=1)

# orchestration pool: local activities of the workflows' own worker
RECORD_EVENTS = ActivityDecl[RecordEventsInput, int](
    "record_events", RecordEventsInput, int, Pool.ORCHESTRATION, timedelta(seconds=30),
    retry(maximum=timedelta(seconds=30)), local=True)
WRITE_REPORT = ActivityDecl[WriteReportInput, ReportPaths](
    "write_report", WriteReportInput, ReportPaths, Pool.ORCHESTRATION, 2 * MINUTE,
    retry(maximum=timedelta(seconds=30), attempts=5), local=True)
WRITE_TASK_REPORT = ActivityDecl[WriteTaskReportInput, str](
    "write_task_report", WriteTaskReportInput, str, Pool.ORCHESTRATION, MINUTE,
    retry(maximum=timedelta(seconds=10), attempts=3), local=True)
"""A task's whole result, written beside its run's report before the task's result is cut."""
CLOSE_CYCLE = ActivityDecl[CloseCycleInput, StudyState](
    "close_cycle", CloseCycleInput, StudyState, Pool.ORCHESTRATION, MINUTE,
    retry(maximum=timedelta(seconds=10), attempts=3), local=True)
"""A study's state after a cycle: its report read, hypotheses judged, the rules' decision."""
RESOLVE_REUSE = ActivityDecl[ResolveReuseInput, list[DependencyArtifact]](
    "resolve_reuse", ResolveReuseInput, list[DependencyArtifact], Pool.ORCHESTRATION, MINUTE,
    retry(maximum=timedelta(seconds=10), attempts=3), local=True)
"""Earlier cycles' verified artifacts a cycle's plan reuses, read from their reports."""
WRITE_STUDY_REPORT = ActivityDecl[StudyReportInput, ReportPaths](
    "write_study_report", StudyReportInput, ReportPaths, Pool.ORCHESTRATION, 2 * MINUTE,
    retry(maximum=timedelta(seconds=30), attempts=5), local=True)
"""A study's report across its cycles (``study.json``, ``study.md``, its chart), rewritten
after each cycle and at the end."""
HAND_OFF_OUTCOME = ActivityDecl[library.HandOffInput, library.HandOffAnswer](
    "hand_off_outcome", library.HandOffInput, library.HandOffAnswer, Pool.ORCHESTRATION,
    timedelta(seconds=30), retry(maximum=timedelta(seconds=10), attempts=8), local=True)
"""A finished task's outcome signalled to the learner (the skill library, which hands memory
its part), so learning never holds the task up; the library drops a repeat."""
PASS_TURN = ActivityDecl[None, bool](
    "pass_turn", None, bool, Pool.ORCHESTRATION, timedelta(seconds=10),
    retry(maximum=timedelta(seconds=1), attempts=3), local=True)
"""Does nothing: awaiting it ends a workflow's activation, so long deterministic work goes
on in the next (``workflows.common.turns``). It can only fail unregistered, which a retry
does not mend: the caller's error says so after three attempts."""

# agents pool: deterministic reviewers and the model roles
MODEL_RETRY = retry(maximum=2 * MINUTE, attempts=8)
"""Rate limits, overload and server errors retry (the activity sets the advised delay)."""
MODEL_TIME = 10 * MINUTE
def _role(name: str, request: type[InT], answer: type[OutT]) -> ActivityDecl[InT, OutT]:
    """A model-backed activity of the agents pool (a role, or the gateway itself)."""
    return ActivityDecl(name, request, answer, Pool.AGENTS, MODEL_TIME, MODEL_RETRY)


REVIEW_OPS = ActivityDecl[ReviewInput, ReviewVerdict](
    "review_ops", ReviewInput, ReviewVerdict, Pool.AGENTS, MINUTE, QUICK)
REVIEW_QUALITY_SAFETY = ActivityDecl[ReviewInput, ReviewVerdict](
    "review_quality_safety", ReviewInput, ReviewVerdict, Pool.AGENTS, MINUTE, QUICK)
CALL_MODEL = _role("call_model", ModelCall, ModelAnswer)
PLAN_GOAL = _role("plan_goal", PlanRequest, PlanAnswer)
REVIEW_PLAN = _role("review_plan", PlanReviewRequest, PlanReviewAnswer)
WRITE_JOB = _role("write_job", CodeRequest, CodeAnswer)
REVIEW_JOB_MODEL = _role("review_job_model", ModelReviewRequest, ModelReviewAnswer)
DEBUG_JOB = _role("debug_job", DebugRequest, DebugAnswer)
SUMMARIZE_RUN = _role("summarize_run", SummaryRequest, SummaryAnswer)
SYNTHESIZE_STUDY = _role("synthesize_study", SynthesisRequest, SynthesisAnswer)
JUDGE_HYPOTHESIS = _role("judge_hypothesis", JudgeRequest, JudgeAnswer)
"""The hypothesis judge: an evaluation's answer against a benchmark's gold hypothesis."""
"""A study's answer when it ends, each statement citing its evidence (the study synthesizer)."""
WRITER_RETRY = retry(maximum=timedelta(seconds=30), attempts=3)
"""The skill writer is advisory: after a few tries the library keeps its deterministic text."""
WRITE_SKILL = ActivityDecl[writing.WriteSkillRequest, writing.WriteSkillAnswer](
    "write_skill", writing.WriteSkillRequest, writing.WriteSkillAnswer, Pool.AGENTS,
    5 * MINUTE, WRITER_RETRY)
JUDGE_MERGE = ActivityDecl[writing.JudgeMergeRequest, writing.JudgeMergeAnswer](
    "judge_merge", writing.JudgeMergeRequest, writing.JudgeMergeAnswer, Pool.AGENTS,
    5 * MINUTE, WRITER_RETRY)
REFORMULATE_QUERY = ActivityDecl[writing.ReformulateRequest, writing.ReformulateAnswer](
    "reformulate_query", writing.ReformulateRequest, writing.ReformulateAnswer, Pool.AGENTS,
    2 * MINUTE, WRITER_RETRY)
REFLECT_FAILURE = _role("reflect_failure", ReflectRequest, ReflectAnswer)

# sandbox pool: everything that runs on, or probes, the job machine
EXECUTE_JOB = ActivityDecl[ExecuteJobInput, ExecutionOutcome](
    "execute_job", ExecuteJobInput, ExecutionOutcome, Pool.SANDBOX, 5 * MINUTE,
    retry(attempts=3))
"""Calls set ``start_to_close`` from the job's timeout and a heartbeat from the run's policy."""
VERIFY_EVIDENCE = ActivityDecl[VerifyEvidenceInput, Verification](
    "verify_evidence", VerifyEvidenceInput, Verification, Pool.SANDBOX, 5 * MINUTE, QUICK)
"""Calls size ``start_to_close`` to the artifacts it re-reads and set the run's heartbeat, as
they do for ``rescan_artifacts``, ``probe_environment`` and ``prepare_environment``: each
heartbeats while it works, so a dead worker's task moves on within the heartbeat timeout."""
REVIEW_INFRASTRUCTURE = ActivityDecl[ReviewInput, ReviewVerdict](
    "review_infrastructure", ReviewInput, ReviewVerdict, Pool.SANDBOX, MINUTE, QUICK)
RESCAN_ARTIFACTS = ActivityDecl[RescanInput, RescanResult](
    "rescan_artifacts", RescanInput, RescanResult, Pool.SANDBOX, 2 * MINUTE, QUICK)
PROBE_ENVIRONMENT = ActivityDecl[None, EnvironmentFacts](
    "probe_environment", None, EnvironmentFacts, Pool.SANDBOX, MINUTE, QUICK)
PREPARE_ENVIRONMENT = ActivityDecl[PrepareEnvironmentInput, PreparedEnvironment](
    "prepare_environment", PrepareEnvironmentInput, PreparedEnvironment, Pool.SANDBOX,
    20 * MINUTE, retry(initial=timedelta(seconds=5), attempts=3))
"""Resolves and installs a job's environment once per host (heartbeating); a bad request is
``EnvironmentRefused`` (never retried), an unreachable index ``EnvironmentUnreachable``."""

# reflection pool: advisory, bounded by the run's reflection_timeout_s (schedule_to_close)
DIAGNOSE_FAILURE = ActivityDecl[DiagnoseInput, ReflectionNote](
    "diagnose_failure", DiagnoseInput, ReflectionNote, Pool.REFLECTION, timedelta(seconds=5),
    ADVISORY)
CONSULT_MEMORY = ActivityDecl[ConsultInput, ConsultAnswer](
    "consult_memory", ConsultInput, ConsultAnswer, Pool.REFLECTION, timedelta(seconds=10),
    ADVISORY)
REMEMBER_TASK = ActivityDecl[RememberInput, RememberAnswer](
    "remember_task", RememberInput, RememberAnswer, Pool.REFLECTION, timedelta(seconds=10),
    ADVISORY)
REMEMBER_TASKS = ActivityDecl[RememberTasksInput, RememberTasksAnswer](
    "remember_tasks", RememberTasksInput, RememberTasksAnswer, Pool.REFLECTION,
    timedelta(seconds=60), ADVISORY)
"""``remember_task`` for several tasks in one dispatch: how the library hands memory a batch."""
RECALL_MEMORY = ActivityDecl[RecallInput, RecallAnswer](
    "recall_memory", RecallInput, RecallAnswer, Pool.REFLECTION, timedelta(seconds=10),
    ADVISORY)
"""The rules and episodes that apply to a goal, as notes for its planner."""

# skills pool
LIBRARY_RETRY = retry(maximum=MINUTE, attempts=5)
MATCH_SKILLS = ActivityDecl[library.MatchInput, library.MatchAnswer](
    "match_skills", library.MatchInput, library.MatchAnswer, Pool.SKILLS,
    timedelta(seconds=10), ADVISORY)
RECORD_OUTCOMES = ActivityDecl[list[library.TaskOutcome], library.RecordAnswer](
    "record_outcomes", list[library.TaskOutcome], library.RecordAnswer, Pool.SKILLS,
    2 * MINUTE, LIBRARY_RETRY)
EXTRACT_SKILLS = ActivityDecl[library.ExtractInput, library.ExtractAnswer](
    "extract_skills", library.ExtractInput, library.ExtractAnswer, Pool.SKILLS,
    5 * MINUTE, LIBRARY_RETRY)
MAINTAIN_SKILLS = ActivityDecl[library.MaintainInput, library.MaintainAnswer](
    "maintain_skills", library.MaintainInput, library.MaintainAnswer, Pool.SKILLS,
    10 * MINUTE, LIBRARY_RETRY)
REVISE_SKILLS = ActivityDecl[writing.ReviseInput, writing.ReviseAnswer](
    "revise_skills", writing.ReviseInput, writing.ReviseAnswer, Pool.SKILLS, 2 * MINUTE,
    LIBRARY_RETRY)
"""The skill writer's texts and agreed merges, put into the library's store."""

CATALOGUE: tuple[ActivityDecl[Any, Any], ...] = (
    RECORD_EVENTS, WRITE_REPORT, WRITE_TASK_REPORT, WRITE_STUDY_REPORT, CLOSE_CYCLE,
    RESOLVE_REUSE, HAND_OFF_OUTCOME, PASS_TURN,
    REVIEW_OPS, REVIEW_QUALITY_SAFETY, CALL_MODEL, PLAN_GOAL, REVIEW_PLAN, WRITE_JOB,
    REVIEW_JOB_MODEL, DEBUG_JOB, SUMMARIZE_RUN, SYNTHESIZE_STUDY, JUDGE_HYPOTHESIS, WRITE_SKILL,
    JUDGE_MERGE,
    REFORMULATE_QUERY, REFLECT_FAILURE,
    EXECUTE_JOB, VERIFY_EVIDENCE, REVIEW_INFRASTRUCTURE, RESCAN_ARTIFACTS, PROBE_ENVIRONMENT,
    PREPARE_ENVIRONMENT,
    DIAGNOSE_FAILURE, CONSULT_MEMORY, REMEMBER_TASK, REMEMBER_TASKS, RECALL_MEMORY,
    MATCH_SKILLS, RECORD_OUTCOMES, EXTRACT_SKILLS, MAINTAIN_SKILLS, REVISE_SKILLS,
)
"""Every activity, in pool order; names are unique (a test checks)."""
REVIEWERS: tuple[ActivityDecl[ReviewInput, ReviewVerdict], ...] = (
    REVIEW_OPS, REVIEW_QUALITY_SAFETY, REVIEW_INFRASTRUCTURE)
"""The review panel, in verdict order (infrastructure runs on the sandbox pool it probes)."""
