"""The ExecutionEvent store: idempotent batch writes, paging and live watching of a run's events.

Workflows never touch the database; they hand batches of events with deterministic ids to the
``record_events`` activity, which inserts them with ``ON CONFLICT (id) DO NOTHING`` so a retried
activity never duplicates an event. Each event names the execution of the run that wrote it (a
``temporal workflow reset`` starts a new one, which writes its own events under ids of its
own: see :mod:`workflows.common.events`). Readers page by ``seq`` (insertion order), which is what
``assay watch RUN`` polls. A run's own events and those of its child task workflows share the
research run id, so one ``run_id`` filter returns all of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from sqlalchemy import TextClause, func, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from temporalio.exceptions import ApplicationError

from activities.events.format import format_event
from activities.events.schema import EVENT_COLUMNS, EVENTS, StoredEvent
from database.engine import Database, DatabaseUnavailable
from database.limits import event_row, fit_key
from workflows.catalogue import RECORD_EVENTS
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import EventRecord, RecordEventsInput

__all__ = [
    "EventStore", "EventStoreUnavailable", "StoredEvent", "format_event", "insert_rows",
]

MAX_PAGE = 10_000
_RUN_LOCK_CLASS = 0x41535345  # advisory-lock namespace for per-run write serialisation


def _insert_statement() -> TextClause:
    """Lock the rows' runs, then insert the rows given as one array per column.

    The locks are a materialized CTE that a one-time filter reads before the first row is
    produced, so they are taken, in sorted order, before any row draws its ``seq``; they last
    until the statement's transaction ends. The statement has one parameter per column,
    however many rows it carries.
    """
    dialect = postgresql.dialect()
    arrays = ", ".join(
        f"CAST(:{name} AS {EVENTS.c[name].type.compile(dialect=dialect)}[])"
        for name in EVENT_COLUMNS)
    return text(
        "WITH locked AS MATERIALIZED ("
        " SELECT pg_advisory_xact_lock(:lock_class, hashtext(run_id))"
        " FROM (SELECT DISTINCT unnest(CAST(:lock_runs AS TEXT[])) AS run_id) AS runs"
        " ORDER BY run_id)"
        f" INSERT INTO {EVENTS.name} ({', '.join(EVENT_COLUMNS)})"
        f" SELECT * FROM unnest({arrays})"
        " WHERE (SELECT count(*) FROM locked) >= 0"
        " ON CONFLICT (id) DO NOTHING RETURNING id")


_INSERT = _insert_statement()


async def insert_rows(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> int:
    """Insert prepared rows (see ``event_row``), skipping known ids; count the new ones.

    One statement, one round trip: it first serialises event writes per run until ``conn``'s
    transaction ends (its own, on an autocommit connection). That makes a run's ``seq``
    order its commit order, which is what lets watchers page by ``seq`` without missing
    rows; locks are taken in sorted order, so two batches spanning the same runs cannot
    deadlock.
    """
    if not rows:
        return 0
    params: dict[str, Any] = {name: [row[name] for row in rows] for name in EVENT_COLUMNS}
    params.update(lock_class=_RUN_LOCK_CLASS, lock_runs=params["run_id"])
    return len((await conn.execute(_INSERT, params)).all())


class EventStoreUnavailable(DatabaseUnavailable):
    """The event database cannot be reached or prepared; the message says which and why."""


class EventStore(Database):
    """PostgreSQL-backed ExecutionEvent store; the worker builds one from settings.

    Args:
        database_url: A SQLAlchemy asyncpg URL, e.g.
            ``postgresql+asyncpg://postgres@/assay?host=/path/to/socketdir``.
    """

    what = "event store"
    unavailable = EventStoreUnavailable

    @RECORD_EVENTS.defn
    async def record_events(self, req: RecordEventsInput) -> int:
        """Write a batch of events in one transaction; return how many were new.

        Idempotent: an event whose ``id`` is already stored is skipped (first write wins), so a
        retried activity writes nothing twice. A batch of any size is one statement, which is
        its own transaction: a workflow's flush of a few events is one round trip.

        An oversize or unstorable event is repaired, not refused, so it cannot fail the batch:
        in an ``inputs``/``outputs``/``meta`` field whose JSON exceeds 256 KB every string over
        16 K characters is cut with a ``…[truncated N chars]`` marker (and a field still too big
        becomes a preview); such fields are listed in ``meta["_truncated"]``. NULs and
        non-finite numbers are replaced, and over-long ids become a stable digest (see
        :mod:`database.limits`).

        Writes for one run are serialised by an advisory lock, so within a run ``seq`` order is
        commit order and a watcher paging by ``seq`` can never skip a late-committing event.

        Raises:
            ApplicationError: ``EventRejected`` (non-retryable) if PostgreSQL refuses the data.
        """
        if not req.events:
            return 0
        rows = [event_row(event) for event in req.events]
        try:
            async with self.engine.connect() as conn:
                alone = await conn.execution_options(isolation_level="AUTOCOMMIT")
                return await insert_rows(alone, rows)
        except (DataError, IntegrityError) as err:
            first = req.events[0]
            raise ApplicationError(
                f"PostgreSQL refused a batch of {len(rows)} events (run {first.run_id!r}, first"
                f" id {first.id!r}): {err.orig}. Fix the event writer; retrying cannot help.",
                type=ErrorType.EVENT_REJECTED,
                non_retryable=True,
            ) from err

    async def events_after(
        self, run_id: str, after_seq: int = 0, limit: int = 500
    ) -> list[StoredEvent]:
        """Up to ``limit`` events of a run (and its task workflows) with ``seq > after_seq``.

        Pass the last ``seq`` you received as ``after_seq`` to get the next page.
        """
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
        stmt = (
            select(EVENTS)
            .where(EVENTS.c.run_id == fit_key(run_id), EVENTS.c.seq > after_seq)
            .order_by(EVENTS.c.seq)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return [
            StoredEvent(
                seq=row["seq"],
                recorded_at=row["recorded_at"],
                event=EventRecord.model_validate(dict(row)),
            )
            for row in rows
        ]

    async def first_events(self, run_id: str, limit: int) -> list[StoredEvent]:
        """A run's first ``limit`` events (with its task workflows'), in ``seq`` order."""
        events: list[StoredEvent] = []
        while len(events) < limit:
            batch = await self.events_after(run_id, events[-1].seq if events else 0,
                                            min(MAX_PAGE, limit - len(events)))
            events += batch
            if not batch:
                break
        return events

    async def count(self, run_id: str, execution: str | None = None) -> int:
        """How many events a run (with its task workflows) has stored.

        Of one execution only when ``execution`` is given (a reset run has several).
        """
        stmt = select(func.count()).select_from(EVENTS).where(EVENTS.c.run_id == fit_key(run_id))
        if execution is not None:
            stmt = stmt.where(EVENTS.c.execution == fit_key(execution))
        async with self.engine.connect() as conn:
            return int((await conn.execute(stmt)).scalar_one())

    async def executions(self, run_id: str) -> dict[str, int]:
        """The executions that wrote a run's events, first writer first, with their counts.

        A run has one unless it was reset (``temporal workflow reset``); events from before
        executions were recorded count under ``""``.
        """
        stmt = (select(EVENTS.c.execution, func.count(), func.min(EVENTS.c.seq))
                .where(EVENTS.c.run_id == fit_key(run_id))
                .group_by(EVENTS.c.execution).order_by(func.min(EVENTS.c.seq)))
        async with self.engine.connect() as conn:
            return {row[0]: int(row[1]) for row in (await conn.execute(stmt)).all()}

    async def watch(
        self,
        run_id: str,
        *,
        poll_s: float = 0.5,
        stop: Callable[[], bool] | None = None,
        after_seq: int = 0,
        page: int = 500,
    ) -> AsyncIterator[StoredEvent]:
        """Yield a run's events in ``seq`` order as they are written, polling every ``poll_s``.

        Ends once ``stop()`` is true, after yielding everything stored up to that moment (so a
        caller that stops when the run finishes still sees its last events). Without ``stop``
        it runs until the consumer stops iterating.
        """
        last = after_seq
        while True:
            stopping = stop is not None and stop()
            while True:
                batch = await self.events_after(run_id, last, page)
                for event in batch:
                    yield event
                if batch:
                    last = batch[-1].seq
                if len(batch) < page:
                    break
            if stopping:
                return
            await asyncio.sleep(poll_s)
