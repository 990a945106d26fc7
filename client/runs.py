"""What the client reads of runs: a run's summary, a running task's live state, task tallies.

:class:`client.assay.AssayClient` returns these; they are plain data and small pure helpers
(which statuses are open, whether a run waits for a plan, how tasks ended), so the CLI can
render them without a server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.failure.v1 import Failure
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.client import WorkflowExecution, WorkflowHandle, WorkflowHistoryEventFilterType
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from workflows.constants import PLAN_KEY, STATUS_KEY, started_with
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import ResearchInput, ResearchResult, RunProgress, TaskProgress
from workflows.contracts.words import plural

OPEN_TASKS = frozenset({"pending", "running", "failed_retry"})
"""Task statuses of a task that has not ended."""
STOPPED = {"terminated": "terminated", "timed_out": "timed out", "canceled": "cancelled",
           "failed": "failed"}
"""Temporal's statuses of a run that ended without a result, in words: whatever its last
query said (``waiting`` at a gate...), it waits for nothing and will not go on."""
MEMO_GOAL_CHARS = 300
"""The most of a goal a run's memo keeps (``assay runs`` and the Web UI show it)."""
UNFINISHED = "unfinished"
"""How a stopped run's tally counts the tasks that had not ended when it stopped."""
EXECUTION_CHARS = 12


def short_execution(run_id: str) -> str:
    """A short form of an execution's Temporal run id, for paths and listings.

    Its last hex digits: random in every run id the server makes (the leading ones of a
    time-ordered id are a timestamp, alike for executions started close together).
    """
    return run_id.replace("-", "")[-EXECUTION_CHARS:]


@dataclass(frozen=True)
class PendingGate:
    """A gate waiting for a person, or (``gate`` None) a goal run waiting for a plan."""

    run_id: str
    workflow_id: str
    gate: GateRecord | None
    approvers: tuple[str, ...] = ()
    """Who may decide the gate (empty: anyone)."""


@dataclass(frozen=True)
class TaskLive:
    """What a running task is doing now: its phase and its pending activity's heartbeat."""

    task_id: str
    phase: str
    activity: str = ""
    """The activity it waits on (``execute_job``...), if any."""
    heartbeat: dict[str, Any] | None = None
    """The activity's last heartbeat details (a job's ``elapsed_s``, ``stdout_bytes``,
    ``last_line``), as the worker sent them: untrusted, to be shown bounded."""
    started: datetime | None = None
    """When the activity's current attempt started (the server's clock)."""
    beat_at: datetime | None = None
    """When the server recorded that heartbeat: its last line was printed by then."""
    attempt: int = 1
    """The activity's current attempt: its elapsed time counts from this attempt's start."""
    last_failure: str = ""
    """Why its last attempt failed (``DiskFull: ...``) while it is retried: the error a task
    keeps meeting, e.g. a full disk."""
    waiting: GateRecord | None = None
    """The task's gate that waits for a person, if any."""
    approvers: tuple[str, ...] = ()
    """Who may decide that gate (empty: anyone)."""


@dataclass(frozen=True)
class TaskTally:
    """How a run's tasks stand: how many completed, how many ended otherwise, how many planned."""

    total: int = 0
    completed: int = 0
    ended_otherwise: Mapping[str, int] = field(default_factory=dict[str, int])
    """Tasks that ended without completing, by status (``failed``, ``deferred``...)."""
    retrying: int = 0
    """Open tasks whose last attempt failed (``failed_retry``: a job that timed out...)."""

    @classmethod
    def of(cls, statuses: Iterable[str]) -> TaskTally:
        """The tally of these task statuses (``failed_final`` counts as ``failed``)."""
        counted = Counter("failed" if s == "failed_final" else s for s in statuses)
        others = {s: n for s, n in sorted(counted.items())
                  if s not in OPEN_TASKS and s != "completed"}
        return cls(total=sum(counted.values()), completed=counted["completed"],
                   ended_otherwise=others, retrying=counted["failed_retry"])

    @classmethod
    def stopped(cls, statuses: Iterable[str]) -> TaskTally:
        """The tally of a run Temporal stopped: its tasks still open count as unfinished."""
        return cls.of(UNFINISHED if s in OPEN_TASKS else s for s in statuses)

    def __str__(self) -> str:
        """``1/3 done, 1 failed, 1 retrying``: completed of planned, then the others.

        The others: those that ended otherwise, then the open ones whose last attempt failed.
        """
        retrying = [f"{self.retrying} retrying"] if self.retrying else []
        return ", ".join([f"{self.completed}/{self.total} done",
                          *(f"{n} {s}" for s, n in self.ended_otherwise.items()), *retrying])


@dataclass(frozen=True)
class RunSummary:
    """One line of ``assay runs``: Temporal's status, Assay's own status and the goal."""

    run_id: str
    status: str
    start_time: str
    assay_status: str = ""
    """The run's ``AssayStatus`` (``completed``, ``partial``, ``deferred``, ``waiting``...)."""
    goal: str = ""
    """The start of the goal, for goal runs."""
    close_time: str = ""
    """When the run ended (empty while it runs)."""
    tasks: TaskTally | None = None
    """How its tasks stand, once known (see :meth:`AssayClient.task_counts`)."""
    stop_reason: str = ""
    """Why Temporal ended a stopped run (its termination reason, its failure), once read."""

    @property
    def stopped(self) -> bool:
        """Whether Temporal ended the run without a result (terminated, timed out...)."""
        return self.status in STOPPED

    def stopped_text(self) -> str:
        """``terminated by Temporal, without a result: REASON`` for a stopped run."""
        why = f": {self.stop_reason}" if self.stop_reason else ""
        return f"{STOPPED.get(self.status, self.status)} by Temporal, without a result{why}"
    execution: str = ""
    """The Temporal run id of this execution of the run (a reset starts another one)."""

    @property
    def shown_status(self) -> str:
        """Assay's status while the workflow runs or once it completed; else Temporal's."""
        if self.assay_status and self.status in ("running", "completed"):
            return self.assay_status
        return self.status


async def summarize(wf: WorkflowExecution) -> RunSummary:
    """The summary of a run as Temporal describes or lists it."""
    goal = await wf.memo_value("goal", "")
    return RunSummary(run_id=wf.id, status=wf.status.name.lower() if wf.status else "unknown",
                      start_time=wf.start_time.isoformat(),
                      assay_status=wf.typed_search_attributes.get(STATUS_KEY) or "",
                      goal=goal if isinstance(goal, str) else "",
                      close_time=wf.close_time.isoformat() if wf.close_time else "",
                      execution=wf.run_id or "")


async def stop_reason(handle: WorkflowHandle[Any, Any], timeout_s: float | None) -> str:
    """Why Temporal ended a stopped run, read from its closing event.

    A termination's reason (``Workflow history size exceeds limit.``), a failure's message,
    a timeout's run timeout (``timeout_s``, the execution's own when known).
    """
    async for event in handle.fetch_history_events(
            event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT):
        if event.HasField("workflow_execution_terminated_event_attributes"):
            ended = event.workflow_execution_terminated_event_attributes
            who = f" (by {ended.identity})" if ended.identity else ""
            return f"{ended.reason or 'no reason given'}{who}"
        if event.HasField("workflow_execution_failed_event_attributes"):
            return event.workflow_execution_failed_event_attributes.failure.message
        if event.HasField("workflow_execution_timed_out_event_attributes"):
            limit = f" of {timeout_s:g} s" if timeout_s else ""
            return f"it ran past its execution timeout{limit}"
        if event.HasField("workflow_execution_canceled_event_attributes"):
            return "its cancellation was requested through Temporal"
    return ""


def pending_live(task_id: str, progress: TaskProgress, act: PendingActivityInfo,
                 beat: dict[str, Any] | None) -> TaskLive:
    """A running task as its pending activity ``act`` (decoded heartbeat ``beat``) shows it."""
    return TaskLive(task_id, progress.phase, act.activity_type.name, beat,
                    started=_time(act.last_started_time), beat_at=_time(act.last_heartbeat_time),
                    attempt=act.attempt or 1, last_failure=_failure(act.last_failure),
                    waiting=progress.waiting, approvers=tuple(progress.approvers))


def _time(stamp: Timestamp) -> datetime | None:
    """A protobuf timestamp as a datetime (None when unset)."""
    return stamp.ToDatetime(tzinfo=UTC) if stamp.seconds else None


def _failure(failure: Failure) -> str:
    """A pending activity's last failure as ``Type: message`` ("" when it has none)."""
    if not failure.message:
        return ""
    kind = (failure.application_failure_info.type
            if failure.HasField("application_failure_info") else "")
    return f"{kind}: {failure.message}" if kind else failure.message


def final_progress(result: ResearchResult, phase: str | None) -> RunProgress | None:
    """A completed run's last progress, read from its result and its ``AssayPhase``.

    None when the result no longer lists every task (a result over its size limit drops its
    per-task list, keeping the counts): the run's ``progress`` query must answer then. No
    gate waits in a run that has ended, so none is named, nor who may decide one.
    """
    if len(result.tasks) != sum(result.task_counts.values()):
        return None
    return RunProgress(run_id=result.run_id, phase=phase or "done", status=result.status,
                       tasks={t.task_id: t.status for t in result.tasks},
                       order=[t.task_id for t in result.tasks],
                       decided=[g for g in result.gates if g.status != "waiting"],
                       refused=[line for g in result.gates for line in g.refused])


def waiting_for_plan(progress: RunProgress) -> bool:
    """Whether a run's progress says it waits for a person's plan (``assay plan``).

    A run that waits with no gate open and no tasks yet is a goal run waiting for a plan.
    """
    return progress.status == "waiting" and progress.waiting is None and not progress.order


def finished(what: str, summary: RunSummary) -> str:
    """Why a finished run's (or task's) gate takes no decision."""
    return (f"{what} has finished ({summary.shown_status}); its gates are closed and take no "
            "decision")


def describe_input(req: ResearchInput) -> tuple[dict[str, Any], str]:
    """Memo and summary a run is started with (shown by ``assay runs`` and the Web UI)."""
    if req.plan is not None:
        tasks = len(req.plan.decisions)
        return ({"plan": req.plan_name, "tasks": tasks},
                f"Assay run of plan {req.plan_name} ({plural(tasks, 'task')})")
    goal = (req.goal or "").strip()
    short = goal if len(goal) <= MEMO_GOAL_CHARS else goal[:MEMO_GOAL_CHARS - 1] + "…"
    first_line = short.splitlines()[0] if short else ""
    return ({"plan": req.plan_name, "goal": short, "data": len(req.data)},
            f"Assay goal run: {first_line[:120]}")


def start_attributes(req: ResearchInput) -> TypedSearchAttributes:
    """Search attributes a run is started with: its kind, plan and status.

    See :func:`workflows.constants.started_with`.
    """
    return started_with("run", SearchAttributePair(PLAN_KEY, req.plan_name))
