"""Event recording from inside workflows: deterministic ids, batched writes.

Events are buffered in workflow state and written by the ``record_events`` local activity at
phase boundaries. Ids come from ``workflow.uuid4()``, which is stable across replays and retries, so
the store's ``ON CONFLICT DO NOTHING`` makes every write idempotent.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import RECORD_EVENTS
    from workflows.contracts.execution import (
        EventRecord,
        EventSubtype,
        EventType,
        RecordEventsInput,
    )

def upsert_keywords(**values: str) -> None:
    """Set keyword search attributes of the current workflow (``AssayStatus="..."`` etc.)."""
    updates = [SearchAttributeKey.for_keyword(name).value_set(value)
               for name, value in values.items()]
    workflow.upsert_search_attributes(updates)  # pyright: ignore[reportUnknownMemberType]


class EventLog:
    """Buffer of a workflow's events, flushed in one activity call."""

    def __init__(self, run_id: str, node_id: str, *, depth: int = 0,
                 parent_event_id: str | None = None) -> None:
        self.run_id = run_id
        self.node_id = node_id
        self.depth = depth
        self.parent_event_id = parent_event_id
        self._order = 0
        self._pending: list[EventRecord] = []

    def add(self, event_type: EventType, subtype: EventSubtype, *, status: str = "",
            agent: str = "assay", inputs: dict[str, Any] | None = None,
            outputs: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
            duration_ms: int | None = None) -> str:
        """Queue one event and return its id (usable as a parent id)."""
        self._order += 1
        event_id = str(workflow.uuid4())
        self._pending.append(EventRecord(
            id=event_id, run_id=self.run_id, node_id=self.node_id, event_type=event_type,
            event_subtype=subtype, agent_name=agent, timestamp=workflow.now(),
            duration_ms=duration_ms, execution_order=self._order, depth=self.depth,
            status=status, inputs=inputs or {}, outputs=outputs or {}, meta=meta or {},
            parent_event_id=self.parent_event_id,
        ))
        return event_id

    async def flush(self) -> None:
        """Write the buffered events in one batch (no-op when empty)."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        # A local activity: the orchestration worker that runs this workflow writes the batch
        # itself, saving a round trip through the server per flush.
        try:
            await RECORD_EVENTS.run(RecordEventsInput(events=batch))
        except (ActivityError, ApplicationError) as err:
            # Only a permanent refusal gets here (transient errors retry): the events are
            # the run's log, not its state, so the run goes on and the workflow log says so.
            workflow.logger.error("dropped %d events of %s: %s", len(batch), self.node_id, err)
