"""The report's ``timeline.md``: the run's events as the tree they nest in.

Run → task → phase → job attempt or debugger → the model calls, reviews and job runs inside,
one line each (time, where, what), indented as ``assay watch RUN --tree`` prints them. Read
from the event store as the report is written, so it holds the events stored by then (the
report's own, written after it, are not in it). The events are the run's log, not its result:
a store that cannot be read leaves a file saying why, never a report unwritten.
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from activities.events.tree import tree_lines
from activities.events.words import describe, where

if TYPE_CHECKING:
    from activities.events.schema import StoredEvent
    from activities.events.store import EventStore
    from workflows.contracts.results import RunReport

EVENTS_FILE = "timeline.md"
REPORT_EVENTS = 20_000
"""The most events the file shows (a run with more says how to see them all)."""


async def read_events(store: EventStore | None,
                      report: RunReport) -> list[StoredEvent] | str | None:
    """The events of the report's execution of its run, or why they could not be read.

    None when the writer has no event store (no ``timeline.md`` is written).
    """
    if store is None:
        return None
    try:
        events = await store.first_events(report.run_id, REPORT_EVENTS + 1)
    except (SQLAlchemyError, OSError) as err:  # the log must never cost the report
        return f"the event store could not be read: {type(err).__name__}: {err}"[:500]
    return [e for e in events if not report.execution or e.event.execution in
            ("", report.execution)]


def _line(stored: StoredEvent) -> tuple[str, str]:
    ev = stored.event
    stamp = ev.timestamp.astimezone(UTC).strftime("%H:%M:%S")
    return stamp, f"{where(ev.node_id):<10}  {describe(ev)}"


def events_markdown(report: RunReport, events: list[StoredEvent] | str) -> str:
    """The text of ``timeline.md``: the events as a tree, or why they are not shown."""
    head = [f"# Events of {report.run_id}", "",
            "Each event under the one it happened in: the run, a task (under the run's hand-off "
            "of it), a phase, a job attempt or a debugger. Times are UTC.", ""]
    if isinstance(events, str):
        body = [f"The events are not shown: {events}. `assay watch {report.run_id} --tree` "
                "reads them from the store."]
    else:
        body = ["```text", *tree_lines(events[:REPORT_EVENTS], _line), "```"]
        if len(events) > REPORT_EVENTS:
            body += ["", f"Only the first {REPORT_EVENTS:,} events are shown; "
                     f"`assay watch {report.run_id} --json` prints them all."]
    return "\n".join([*head, *body, ""])
