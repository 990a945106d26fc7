"""Where a run's milliseconds go, read from its workflows' histories.

Every workflow of a run (the research workflow and its children, found through the child
events) is walked once; each dispatch becomes a row: an activity's wait in its queue
(scheduled -> started) and its run (started -> closed), a local activity's time from its
marker, a child workflow's start (initiated -> started) and its whole life, and each workflow
task's queue wait and processing. Rows of the same name are summed over the runs given, so
the table reads as the average cost of one run. Local activities run inside their workflow
task, so their time is in that task's run column.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

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
        return out


def _ms(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds() * 1000


async def add_run(client: Client, workflow_id: str, into: Breakdown) -> None:
    """Walk ``workflow_id`` and every child it started; add their dispatches to ``into``."""
    into.runs += 1
    pending = [workflow_id]
    first = True
    while pending:
        wid = pending.pop()
        events = (await client.get_workflow_handle(wid).fetch_history()).events
        into.events += len(events)
        if first and events:
            into.wall_ms += _ms(events[0].event_time.ToDatetime(),
                                events[-1].event_time.ToDatetime())
            first = False
        pending.extend(_walk(events, into))


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
    """A local activity's marker, counted by type; its time is inside its workflow task's run.

    (The marker's own times come from the worker's clock and are not comparable with the
    server's event times, so they are not used.)
    """
    a = ev.marker_recorded_event_attributes
    if a.marker_name != "core_local_activity" or "data" not in a.details:
        return
    payloads = a.details["data"].payloads
    name = json.loads(payloads[0].data).get("activity_type", "?") if payloads else "?"
    into.add(f"local activity {name}", 0.0, 0.0)
