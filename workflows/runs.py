"""What the client reads of runs: a run's summary, a running task's live state, task tallies.

:class:`workflows.client.AssayClient` returns these; they are plain data and small pure helpers
(which statuses are open, whether a run waits for a plan, how tasks ended), so the CLI can
render them without a server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio.client import WorkflowExecution

from workflows.constants import STATUS_KEY
from workflows.contracts.executive import GateRecord
from workflows.contracts.results import ResearchResult, RunProgress

OPEN_TASKS = frozenset({"pending", "running", "failed_retry"})
"""Task statuses of a task that has not ended."""


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


@dataclass(frozen=True)
class TaskTally:
    """How a run's tasks stand: how many completed, how many ended otherwise, how many planned."""

    total: int = 0
    completed: int = 0
    ended_otherwise: Mapping[str, int] = field(default_factory=dict[str, int])
    """Tasks that ended without completing, by status (``failed``, ``deferred``...)."""

    @classmethod
    def of(cls, statuses: Iterable[str]) -> TaskTally:
        """The tally of these task statuses (``failed_final`` counts as ``failed``)."""
        counted = Counter("failed" if s == "failed_final" else s for s in statuses)
        others = {s: n for s, n in sorted(counted.items())
                  if s not in OPEN_TASKS and s != "completed"}
        return cls(total=sum(counted.values()), completed=counted["completed"],
                   ended_otherwise=others)

    def __str__(self) -> str:
        """``1/2 done, 1 failed``: completed of planned, then the others that ended."""
        return ", ".join([f"{self.completed}/{self.total} done",
                          *(f"{n} {s}" for s, n in self.ended_otherwise.items())])


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
                      close_time=wf.close_time.isoformat() if wf.close_time else "")


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
