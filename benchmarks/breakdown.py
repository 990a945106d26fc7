"""Where a run's milliseconds go, read from its workflows' histories.

Every workflow of a run (the research workflow and its children, found through the child
events) is walked once; each dispatch becomes a row: an activity's wait in its queue
(scheduled -> started) and its run (started -> closed), a local activity's time from its
marker, a child workflow's start (initiated -> started) and its whole life, and each workflow
task's queue wait and processing. Rows of the same name are summed over the runs given, so
the table reads as the average cost of one run. Local activities run inside their workflow
task, so their time is in that task's run column too; a history does not hold it (the
marker's times are not its duration), so the workers time each one (:class:`ActivityClock`,
an interceptor) and their rows show that time.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.client import Interceptor as ClientInterceptor
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
)
from temporalio.worker import Interceptor as WorkerInterceptor

E = EventType


@dataclass
class Row:
    """One kind of dispatch: how often, and milliseconds waiting and running in total."""

    count: int = 0
    wait_ms: float = 0.0
    run_ms: float = 0.0


@dataclass
class Breakdown:
    """Rows by dispatch, summed over ``runs`` runs, and the wall time of those runs."""

    rows: dict[str, Row] = field(default_factory=lambda: defaultdict(Row))
    runs: int = 0
    wall_ms: float = 0.0
    events: int = 0
    history_bytes: int = 0

    def add(self, name: str, wait_ms: float, run_ms: float) -> None:
        row = self.rows[name]
        row.count += 1
        row.wait_ms += wait_ms
        row.run_ms += run_ms

    def lines(self) -> list[str]:
        """The table, per run, heaviest first."""
        n = max(self.runs, 1)
        out = [f"   {'dispatch (per run)':34}{'count':>7}{'queue ms':>10}{'run ms':>10}"]
        for name, row in sorted(self.rows.items(), key=lambda kv: -(kv[1].wait_ms
                                                                      + kv[1].run_ms)):
            out.append(f"   {name:34}{row.count / n:7.1f}{row.wait_ms / n:10.1f}"
                       f"{row.run_ms / n:10.1f}")
        out.append(f"   {'wall time of the run':34}{'':7}{'':10}{self.wall_ms / n:10.1f}")
        out.append(f"   {'history events (all workflows)':34}{self.events / n:7.0f}")
        out.append(f"   {'history bytes (all workflows)':34}{self.history_bytes / n:7.0f}")
        return out


class ActivityClock(ClientInterceptor, WorkerInterceptor):
    """Milliseconds each local activity ran on its worker, by workflow id and activity type.

    A client made with it gives it to every worker built from that client.
    """

    def __init__(self) -> None:
        self.local: dict[str, list[tuple[str, float]]] = defaultdict(list)

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Timed(next, self)


class _Timed(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, clock: ActivityClock) -> None:
        super().__init__(next)
        self.clock = clock

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        start = time.perf_counter()
        try:
            return await super().execute_activity(input)
        finally:
            if info.is_local and info.workflow_id is not None:
                self.clock.local[info.workflow_id].append(
                    (info.activity_type, (time.perf_counter() - start) * 1000))


def _ms(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds() * 1000


async def add_run(client: Client, workflow_id: str, into: Breakdown,
                  clock: ActivityClock | None = None) -> None:
    """Walk ``workflow_id`` and every child it started; add their dispatches to ``into``, with
    the time ``clock`` saw their local activities run."""
    into.runs += 1
    pending = [workflow_id]
    first = True
    while pending:
        wid = pending.pop()
        events = (await client.get_workflow_handle(wid).fetch_history()).events
        into.events += len(events)
        into.history_bytes += sum(event.ByteSize() for event in events)
        if first and events:
            into.wall_ms += _ms(events[0].event_time.ToDatetime(),
                                events[-1].event_time.ToDatetime())
            first = False
        pending.extend(_walk(events, into))
        for name, ms in clock.local.get(wid, []) if clock is not None else []:
            into.rows[f"local activity {name}"].run_ms += ms


def _walk(events: Iterable[HistoryEvent], into: Breakdown) -> list[str]:
    """Add one workflow's dispatches; the IDs of the children it started."""
    by_id: dict[int, HistoryEvent] = {}
    children: list[str] = []
    for ev in events:
        by_id[ev.event_id] = ev
        t = ev.event_time.ToDatetime()
        kind = ev.event_type
        if kind == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            a = ev.workflow_task_completed_event_attributes
            started = by_id[a.started_event_id]
            scheduled = by_id[a.scheduled_event_id]
            into.add("workflow task", _ms(scheduled.event_time.ToDatetime(),
                                          started.event_time.ToDatetime()),
                     _ms(started.event_time.ToDatetime(), t))
        elif kind in (E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, E.EVENT_TYPE_ACTIVITY_TASK_FAILED):
            a = (ev.activity_task_completed_event_attributes
                 if kind == E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                 else ev.activity_task_failed_event_attributes)
            scheduled = by_id[a.scheduled_event_id]
            started = by_id.get(a.started_event_id, scheduled)
            name = scheduled.activity_task_scheduled_event_attributes.activity_type.name
            into.add(f"activity {name}", _ms(scheduled.event_time.ToDatetime(),
                                             started.event_time.ToDatetime()),
                     _ms(started.event_time.ToDatetime(), t))
        elif kind == E.EVENT_TYPE_MARKER_RECORDED:
            _local(ev, into)
        elif kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            a = ev.child_workflow_execution_started_event_attributes
            initiated = by_id[a.initiated_event_id]
            into.add(f"child start {a.workflow_type.name}",
                     _ms(initiated.event_time.ToDatetime(), t), 0.0)
            children.append(a.workflow_execution.workflow_id)
        elif kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
            a = ev.child_workflow_execution_completed_event_attributes
            started = by_id[a.started_event_id]
            into.add(f"child run {a.workflow_type.name}", 0.0,
                     _ms(started.event_time.ToDatetime(), t))
        elif kind == E.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
            into.add("signal to another workflow", 0.0, 0.0)
        elif kind == E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            into.add("search attribute upsert", 0.0, 0.0)
    return children


def _local(ev: HistoryEvent, into: Breakdown) -> None:
    """A local activity's marker, counted by type (its time is the clock's: :func:`add_run`).

    (The marker's own times are when the worker scheduled and completed it in core, not how
    long it ran.)
    """
    a = ev.marker_recorded_event_attributes
    if a.marker_name != "core_local_activity" or "data" not in a.details:
        return
    payloads = a.details["data"].payloads
    name = json.loads(payloads[0].data).get("activity_type", "?") if payloads else "?"
    into.add(f"local activity {name}", 0.0, 0.0)
