"""Event recording from inside workflows: deterministic ids, batched writes.

Events are buffered in workflow state and written by the ``record_events`` local activity
before the workflow waits for something slow (a job, a model, a person, its tasks) and when it
ends: each write is a local activity the workflow waits for (~5 ms), so not at every step.
Ids come from ``workflow.uuid4()``, which is stable across replays and retries, so the store's
``ON CONFLICT DO NOTHING`` makes every write idempotent. Each is made a UUID of the run's
execution (``uuid5`` of the drawn one and the execution's run id): an execution that
``temporal workflow reset`` started replays the events drawn before its reset point with the
same draws, and writes them as its own instead of colliding with the first execution's.

Events form a tree through ``parent_event_id``: run → task (under the run's hand-off of it) →
phase → job attempt or debugger → model calls, reviews and job runs. The parent is what the
workflow holds open when it adds the event: the phase it is in (``holds="phase"``), else its
own first event (``holds="root"``), else the event that started it; a step that runs beside
others (a debugger, a job attempt) opens a scope with :meth:`EventLog.within`, kept in a
context variable, so concurrent steps each nest their events under their own. Nothing of this
is a command: the parent ids travel in the events the workflow writes anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import weakref
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributePair, SearchAttributeUpdate
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import RECORD_EVENTS
    from workflows.common.details import CurrentDetails
    from workflows.constants import KIND_KEY, STATUS_KEY
    from workflows.contracts.execution import (
        EventRecord,
        EventScope,
        EventSubtype,
        EventType,
        RecordEventsInput,
    )

_PENDING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                    dict[str, SearchAttributeUpdate[Any]]] = (
    weakref.WeakKeyDictionary())
"""Updates not yet sent, by workflow instance (each runs its own event loop; this module is
shared by every instance, and a replay after an eviction starts on a fresh loop)."""
_STARTED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary())
"""By workflow instance, the search attributes it started with and has not set since."""
_UNSET = object()

_WITHIN: ContextVar[tuple[EventLog, EventScope] | None] = ContextVar("assay_event_scope",
                                                                    default=None)
"""The scope the current asyncio task nests its events under, and the log it belongs to (a
task of the workflow's copies its creator's, so steps run side by side keep theirs apart)."""

Holds = Literal["root", "phase"]


def upsert_keywords(**values: str) -> None:
    """Set keyword search attributes of the current workflow (``AssayStatus="..."`` etc.)."""
    upsert(*(SearchAttributeKey.for_keyword(name).value_set(value)
             for name, value in values.items()))


def upsert(*updates: SearchAttributeUpdate[Any]) -> None:
    """Set search attributes of the current workflow, merged into one upsert per activation.

    A task moves through several phases and statuses in one activation, and each upsert is a
    command, a history event and a visibility write on the server. The updates are kept (the
    last value of each attribute wins) and sent by a callback on the workflow's event loop,
    which runs once the code that set them waits: still in this activation, before the
    workflow's completion, in an order replay repeats.
    """
    loop = asyncio.get_running_loop()
    pending = _PENDING.get(loop)
    if pending is None:
        pending = _PENDING[loop] = {}
        loop.call_soon(_send, loop)
    for update in updates:
        pending[update.key.name] = update


def _start_values(loop: asyncio.AbstractEventLoop) -> dict[str, Any]:
    """The search attributes the workflow started with that no upsert has set since.

    Only a workflow started with its kind and status has any: one started by this version's
    client or run (:func:`workflows.constants.started_with`). Those started before never were,
    so they upsert exactly what they did and their histories replay unchanged, with no patch.
    A workflow continued as new carries its attributes over; it is left out, as it always
    upserted them. Read at the first upsert, before any has changed the workflow's info; the
    same on every replay.
    """
    values = _STARTED.get(loop)
    if values is None:
        info = workflow.info()
        start = info.typed_search_attributes
        pairs: list[SearchAttributePair[Any]] = list(start)
        fresh = info.continued_run_id is None and start.get(KIND_KEY) and start.get(STATUS_KEY)
        values = _STARTED[loop] = {p.key.name: p.value for p in pairs} if fresh else {}
    return values


def _send(loop: asyncio.AbstractEventLoop) -> None:
    """Send the activation's updates, less those setting a value the workflow started with.

    A workflow started with its kind, plan and status (a run by the client, a task by its run)
    finds them set and sends nothing for them the first time it sets them: every upsert is a
    history event and a visibility write on the server. Once a key is set anew, every later
    update of it is sent.
    """
    pending = _PENDING.pop(loop, None)
    if not pending:
        return
    start = _start_values(loop)
    updates = [u for u in pending.values() if start.get(u.key.name, _UNSET) != u.value]
    for name in pending:
        start.pop(name, None)
    if updates:
        workflow.upsert_search_attributes(updates)  # pyright: ignore[reportUnknownMemberType]


def run_execution(run_id: str) -> str:
    """The execution of run ``run_id`` the current workflow belongs to: its Temporal run id.

    The run's own workflow, a task or branch it started, or a task of such a branch (found
    through the root) all name the same execution; ``temporal workflow reset`` of the run
    starts a new one. Read from the workflow's info, which is the same on every replay.
    """
    info = workflow.info()
    for ref in (info, info.parent, info.root):
        if ref is not None and ref.workflow_id == run_id:
            return ref.run_id
    # A branch's task in a study's run: its branch, started anew by a reset as well.
    return info.parent.run_id if info.parent is not None else info.run_id


class EventLog:
    """Buffer of a workflow's events, flushed in one activity call.

    Args:
        run_id: the run the events belong to.
        node_id: who writes them (``run``, a task's scope, ``branch-NAME``, ``study``).
        depth: the depth of an event with no parent.
        parent: the event that started this workflow (a task's: the run's hand-off of it).
    """

    def __init__(self, run_id: str, node_id: str, *, depth: int = 0,
                 parent: EventScope | None = None) -> None:
        self.run_id = run_id
        self.execution = run_execution(run_id)
        self.node_id = node_id
        self.depth = depth
        self.parent = parent
        self.root: EventScope | None = None
        """This workflow's own first event, once it was added with ``holds="root"``."""
        self.phase: EventScope | None = None
        """The event of the phase the workflow is in (``holds="phase"``)."""
        self._order = 0
        self._undrawn = 0
        self._pending: list[EventRecord] = []
        self._writes: set[asyncio.Task[None]] = set()
        self.details = CurrentDetails()
        """What the workflow's page in the Web UI says it is doing now."""

    def add(self, event_type: EventType, subtype: EventSubtype, *, status: str = "",
            agent: str = "assay", inputs: dict[str, Any] | None = None,
            outputs: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
            duration_ms: int | None = None, under: EventScope | None = None) -> str:
        """Queue one event and return its id; ``under`` names its parent (default: held)."""
        return self.open(event_type, subtype, status=status, agent=agent, inputs=inputs,
                         outputs=outputs, meta=meta, duration_ms=duration_ms,
                         under=under).id

    def open(self, event_type: EventType, subtype: EventSubtype, *, status: str = "",
             agent: str = "assay", inputs: dict[str, Any] | None = None,
             outputs: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
             duration_ms: int | None = None, under: EventScope | None = None,
             holds: Holds | None = None, undrawn: bool = False) -> EventScope:
        """Queue one event and return it as a scope other events can nest under.

        Its parent is ``under``, by default the scope held now (:meth:`held`). ``holds="root"``
        makes it the workflow's own first event, ``holds="phase"`` the phase it is in (whose
        parent is the root): later events nest under it. ``undrawn`` is for an event added
        after 0.1.0: its id draws nothing from the workflow's random stream, so the events
        after it keep the ids they had.
        """
        self._order += 1
        if under is None:
            under = self._parent_for(holds)
        depth = under.depth + 1 if under is not None else self.depth
        if undrawn:
            self._undrawn += 1
            event_id = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{self.execution}/{self.node_id}/"
                                                          f"{self._undrawn}"))
        else:
            event_id = str(uuid.uuid5(workflow.uuid4(), self.execution))
        self._pending.append(EventRecord(
            id=event_id, run_id=self.run_id, execution=self.execution, node_id=self.node_id,
            event_type=event_type,
            event_subtype=subtype, agent_name=agent, timestamp=workflow.now(),
            duration_ms=duration_ms, execution_order=self._order, depth=depth,
            status=status, inputs=inputs or {}, outputs=outputs or {}, meta=meta or {},
            parent_event_id=under.id if under is not None else None,
        ))
        scope = EventScope(id=event_id, depth=depth)
        if holds == "root":
            self.root, self.phase = scope, None
        elif holds == "phase":
            self.phase = scope
        return scope

    def _parent_for(self, holds: Holds | None) -> EventScope | None:
        if holds == "root":
            return self.parent
        if holds == "phase":
            return self.root or self.parent
        return self.held()

    def held(self) -> EventScope | None:
        """The scope new events nest under: the current step's, else the phase, else the root."""
        within = _WITHIN.get()
        if within is not None and within[0] is self:
            return within[1]
        return self.phase or self.root or self.parent

    @contextmanager
    def within(self, scope: EventScope) -> Generator[EventScope]:
        """Nest the events this asyncio task adds under ``scope`` until the block ends."""
        token = _WITHIN.set((self, scope))
        try:
            yield scope
        finally:
            # A workflow evicted while it waits inside the block has its coroutine closed
            # outside the asyncio task's context, where the token cannot be reset (nor needs to).
            with contextlib.suppress(ValueError):
                _WITHIN.reset(token)

    def flush_soon(self, summary: str) -> None:
        """Write the buffered events now, from a handler that cannot wait (a signal's).

        The write is a task of the workflow's own, so a refusal is in the event store (and
        on the timeline, as a call whose summary says so) while the workflow still waits.
        """
        task = asyncio.get_running_loop().create_task(self.flush(summary))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def flush(self, summary: str | None = None) -> None:
        """Write the buffered events in one batch (no-op when empty).

        Args:
            summary: what the Web UI's timeline shows of the write (default: nothing).
        """
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        # A local activity: the orchestration worker that runs this workflow writes the batch
        # itself, saving a round trip through the server per flush.
        try:
            await RECORD_EVENTS.run(RecordEventsInput(events=batch), summary=summary)
        except (ActivityError, ApplicationError) as err:
            # Only a permanent refusal gets here (transient errors retry): the events are
            # the run's log, not its state, so the run goes on and the workflow log says so.
            workflow.logger.error("dropped %d events of %s: %s", len(batch), self.node_id, err)
