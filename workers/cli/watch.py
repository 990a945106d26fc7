"""``assay watch``: a run's events as readable lines (or JSON lines), in the order recorded.

Events are read in the order the store numbered them (``seq``) and said in words —
``02:31:05  task 2  job succeeded in 4.2 s`` — not as internal kinds and raw JSON;
``--json`` prints each stored event as one JSON object per line for machines. A workflow
writes its events in batches at its next step, so a refused gate decision would show only
then: watch also asks the run (and its running tasks) for their gates' refusals each time it
polls, prints new ones at once and skips the same refusal when its event arrives later.
A run reset with ``temporal workflow reset`` goes on in a new execution, which writes events of
its own: watch says so where they begin (``reset: a new execution 1a2b… started from event
12``, the history event the run was reset to).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from temporalio.api.enums.v1 import WorkflowTaskFailedCause

from activities.events.format import short
from activities.events.tree import build_tree, tree_lines, walk
from activities.events.words import describe, refused_text, where
from client.runs import short_execution
from workers.cli.progress import clock
from workflows.contracts.gates import REFUSAL_CHARS, GateRecord
from workflows.contracts.plaintext import clip

if TYPE_CHECKING:
    from activities.events.schema import StoredEvent
    from activities.events.store import EventStore
    from client.assay import AssayClient
    from workflows.contracts.execution import EventRecord

__all__ = [
    "Executions", "Refusals", "describe", "refusal_line", "refused_text", "watch_json",
    "watch_line", "watch_run", "watch_tree", "where",
]

POLL_S = 0.5
RESET_CAUSE = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW
TREE_EVENTS = 100_000
"""The most events ``--tree`` reads; a run with more shows its first ones and says so."""


def watch_line(stored: StoredEvent) -> str:
    """One readable line: time (UTC), where, what happened."""
    ev = stored.event
    return f"{clock(ev.timestamp)}  {where(ev.node_id):<10}  {describe(ev)}"


def watch_json(stored: StoredEvent) -> str:
    """One JSON object: the stored event and its readable text."""
    return json.dumps({**stored.model_dump(mode="json"), "text": describe(stored.event)},
                      ensure_ascii=False)


def refusal_line(node_id: str, refusal: str) -> str:
    """A gate refusal seen through the run's query, before its event is written.

    The query keeps it as ``who: reason``; it reads as the refusal's event does.
    """
    who, sep, reason = short(refusal, REFUSAL_CHARS).partition(": ")
    text = refused_text(who, reason) if sep else f"a decision was refused: {who}"
    return f"{where(node_id):<10}  {text}"


@dataclass
class Refusals:
    """Gate refusals shown once: when a query first shows them, or when their event comes."""

    _counts: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    _early: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    _late: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])

    def new(self, node_id: str, gate: GateRecord | None) -> list[str]:
        """The refusals of ``gate`` (open on ``node_id``) not shown yet (nor as events)."""
        if gate is None:
            return []
        key = (node_id, gate.gate)
        fresh = gate.refused_count - self._counts.get(key, 0)
        self._counts[key] = gate.refused_count
        shown: list[str] = []
        for line in gate.refused[-fresh:] if fresh > 0 else []:
            if (node_id, line) in self._late:  # its event came first and was shown
                self._late.discard((node_id, line))
            else:
                shown.append(line)
        self._early.update((node_id, line) for line in shown)
        return shown

    def seen(self, stored: StoredEvent) -> bool:
        """Whether ``stored`` is a refusal already shown from a query.

        A refusal whose event comes first is shown as the event, and not again when a query
        shows it.
        """
        ev = stored.event
        if ev.event_type != "approval" or ev.status != "refused":
            return False
        line = clip(f"{ev.agent_name}: {ev.outputs.get('reason', '')}", REFUSAL_CHARS)
        if (ev.node_id, line) in self._early:
            self._early.discard((ev.node_id, line))
            return True
        self._late.add((ev.node_id, line))
        return False


@dataclass
class Executions:
    """The executions of a run whose events were shown, to say where a reset's begin."""

    _seen: set[str] = field(default_factory=set[str])

    def new(self, stored: StoredEvent) -> str | None:
        """The execution ``stored`` begins, if it is a new one after another's events."""
        execution = stored.event.execution
        if not execution or execution in self._seen:
            return None
        fresh = bool(self._seen)
        self._seen.add(execution)
        return execution if fresh else None


async def reset_point(client: AssayClient, run_id: str, execution: str) -> int | None:
    """The history event a reset execution of ``run_id`` started from (None: none found).

    It is the id of the workflow task the server failed for the reset, which is the event
    given to ``temporal workflow reset``.
    """
    with contextlib.suppress(Exception):  # a history no longer kept: the line says less
        handle = client.handle(run_id, execution)
        async for event in handle.fetch_history_events():
            failed = event.workflow_task_failed_event_attributes
            if (event.HasField("workflow_task_failed_event_attributes")
                    and failed.cause == RESET_CAUSE):
                return event.event_id
    return None


async def reset_line(client: AssayClient, run_id: str, stored: StoredEvent, *,
                     as_json: bool) -> str:
    """The line that says a reset execution's events begin (before ``stored``, its first)."""
    execution = stored.event.execution
    point = await reset_point(client, run_id, execution)
    text = (f"reset: a new execution {short_execution(execution)} started"
            + (f" from event {point}" if point is not None else ""))
    if as_json:
        return json.dumps({"reset": execution, "from_event": point, "text": text})
    return f"{clock(stored.event.timestamp)}  {where('run'):<10}  {text}"


async def watch_run(client: AssayClient, store: EventStore, run_id: str, *, follow: bool,
                    as_json: bool, echo: Callable[[str], None]) -> int:
    """Print a run's events until it ends (or once, without ``follow``), refusals at once.

    A run Temporal stopped (terminated, timed out, cancelled) ends with a line saying so and
    why; the exit code is then not 0 (:func:`workers.cli.common.stopped_exit`).
    """
    refusals, executions = Refusals(), Executions()
    after, first = 0, True
    while True:
        # Status first: once a run is seen finished, one more read drains its events.
        running = await client.status(run_id) == "running"
        while batch := await store.events_after(run_id, after):
            for stored in batch:
                if executions.new(stored) is not None:
                    echo(await reset_line(client, run_id, stored, as_json=as_json))
                if not refusals.seen(stored):
                    echo(watch_json(stored) if as_json else watch_line(stored))
            after = batch[-1].seq
        if not running:
            return await _stopped(client, run_id, as_json=as_json, echo=echo)
        if not follow:
            return 0
        for node_id, line in await _refusals(client, run_id, refusals):
            if not first:
                echo(json.dumps({"refused": line, "node_id": node_id}) if as_json
                     else f"{clock(datetime.now(UTC))}  {refusal_line(node_id, line)}")
        first = False
        await asyncio.sleep(POLL_S)


async def _stopped(client: AssayClient, run_id: str, *, as_json: bool,
                   echo: Callable[[str], None]) -> int:
    """Say that Temporal stopped the run, if it did; the command's exit code."""
    from workers.cli.common import stopped_exit

    summary = await client.describe_run(run_id)
    if summary.stopped:
        echo(json.dumps({"stopped": summary.status, "reason": summary.stop_reason}) if as_json
             else f"{clock(datetime.now(UTC))}  {where('run'):<10}  {summary.stopped_text()}")
    return stopped_exit(summary.status)


async def _refusals(client: AssayClient, run_id: str,
                    refusals: Refusals) -> list[tuple[str, str]]:
    """New refusals at the run's open gate and its running tasks' (best effort)."""
    found: list[tuple[str, str]] = []
    with contextlib.suppress(Exception):  # a run or task between steps may not answer
        progress = await client.progress(run_id)
        found += [("run", line) for line in refusals.new("run", progress.waiting)]
        for tid, status in progress.tasks.items():
            if status == "running":
                task = await client.task_progress(run_id, tid)
                found += [(tid, line) for line in refusals.new(tid, task.waiting)]
    return found


def tree_line(stored: StoredEvent) -> tuple[str, str]:
    """An event's line in the tree: its time, then where and what (indented between)."""
    ev: EventRecord = stored.event
    return clock(ev.timestamp), f"{where(ev.node_id):<10}  {describe(ev)}"


def tree_json(events: list[StoredEvent]) -> list[str]:
    """The tree as JSON lines, parents first: each stored event, its depth, text and cut."""
    return [json.dumps({**node.stored.model_dump(mode="json"), "tree_depth": depth,
                        "cut": node.cut or None, "text": describe(node.stored.event)},
                       ensure_ascii=False)
            for depth, node in walk(build_tree(events))]


async def watch_tree(client: AssayClient, store: EventStore, run_id: str, *, as_json: bool,
                     echo: Callable[[str], None]) -> int:
    """Print a run's events once, as the tree their parents draw (run → task → phase → …).

    A running run shows the events stored so far and says so; one Temporal stopped ends with
    the line saying why, and its exit code (as :func:`watch_run`).
    """
    running = await client.status(run_id) == "running"
    events = await store.first_events(run_id, TREE_EVENTS + 1)
    shown = events[:TREE_EVENTS]
    for line in tree_json(shown) if as_json else tree_lines(shown, tree_line):
        echo(line)
    notes: list[str] = []
    if len(events) > TREE_EVENTS:
        notes.append(f"only the first {TREE_EVENTS:,} events are shown; `assay watch "
                     f"{run_id} --json` prints them all")
    if running:
        notes.append(f"the run is still running: these are its first {len(shown):,} events; "
                     f"`assay watch {run_id} --tree` again shows the rest")
    for note in notes:
        echo(json.dumps({"note": note}) if as_json else note)
    return 0 if running else await _stopped(client, run_id, as_json=as_json, echo=echo)
