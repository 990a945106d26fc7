"""EventStore on real embedded PostgreSQL: idempotent batches, paging, watching, repairs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import event, make_url, text
from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.events.schema import EVENT_COLUMNS
from activities.events.store import (
    EventStore,
    EventStoreUnavailable,
    StoredEvent,
    format_event,
    insert_rows,
)
from client.assay import DATA_CONVERTER
from database.limits import MAX_JSON_BYTES, MAX_STRING_CHARS, event_row, fit_key
from workflows.contracts.execution import EventRecord, RecordEventsInput

db = pytest.mark.integration
T0 = datetime(2026, 1, 21, 10, 30, tzinfo=UTC)


def events(run_id: str, n: int, *, start: int = 0, node: str = "step_1") -> list[EventRecord]:
    return [
        EventRecord(
            id=f"{run_id}:{node}:{i}", run_id=run_id, node_id=node, event_type="tool_call",
            event_subtype="complete", agent_name="engineer", timestamp=T0 + timedelta(seconds=i),
            duration_ms=i, execution_order=i, depth=1, status="completed",
            inputs={"query": f"q{i}"}, outputs={"rows": i, "ok": True}, meta={"n": [i]},
            parent_event_id=f"{run_id}:{node}:parent",
        )
        for i in range(start, start + n)
    ]


def new_run() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"


async def make_database(server_url: str) -> str:
    """A fresh, empty database on the shared server; returns its URL."""
    name = f"events_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[EventStore]:
    async with EventStore(await make_database(postgres_server_url)) as opened:
        yield opened


@db
async def test_batch_is_read_back_in_order_with_every_field(store: EventStore) -> None:
    run, other = new_run(), new_run()
    batch = events(run, 30) + events(run, 5, node="task-a") + events(other, 3)
    assert await store.record_events(RecordEventsInput(events=batch)) == 38

    got = await store.events_after(run)
    assert [e.event for e in got] == batch[:35]  # every field round-trips, other run excluded
    assert [e.seq for e in got] == sorted({e.seq for e in got})
    assert await store.count(run) == 35
    assert await store.count(other) == 3


@db
async def test_same_batch_twice_writes_nothing_new(store: EventStore) -> None:
    run = new_run()
    req = RecordEventsInput(events=events(run, 20))
    assert await store.record_events(req) == 20
    assert await store.record_events(req) == 0
    assert await store.count(run) == 20


@db
async def test_retried_activity_writes_no_duplicates(store: EventStore) -> None:
    run = new_run()
    env = ActivityEnvironment()
    first = RecordEventsInput(events=events(run, 10))
    assert await env.run(store.record_events, first) == 10

    # The retry re-sends the same ids (plus events produced since); only those are new.
    env.info = dataclasses.replace(env.info, attempt=2)
    retry = RecordEventsInput(events=events(run, 15))
    assert await env.run(store.record_events, retry) == 5
    assert await store.count(run) == 15
    assert [e.event.id for e in await store.events_after(run)] == [e.id for e in retry.events]


MAX_BIND_PARAMS = 32_767
"""What asyncpg sends in one statement at most."""


@db
async def test_a_batch_too_large_for_a_parameter_per_value_is_written_whole_in_order(
        store: EventStore) -> None:
    run = new_run()
    batch = events(run, 10_000)
    assert len(batch) * len(EVENT_COLUMNS) > MAX_BIND_PARAMS  # a parameter per value: refused
    assert await store.record_events(RecordEventsInput(events=batch)) == 10_000
    assert await store.count(run) == 10_000
    got = await store.events_after(run, limit=10_000)
    assert [e.event.execution_order for e in got] == list(range(10_000))  # seq is batch order


@db
async def test_a_flush_is_one_statement_that_also_locks_its_run(store: EventStore) -> None:
    sent: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *rest: object) -> None:
        sent.append(statement)

    engine = store.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert await store.record_events(RecordEventsInput(events=events(new_run(), 5))) == 5
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(sent) == 1, sent
    assert "pg_advisory_xact_lock" in sent[0] and "INSERT INTO execution_events" in sent[0]


@db
async def test_concurrent_writers_and_a_watcher_see_each_event_once(store: EventStore) -> None:
    run = new_run()
    batches = [events(run, 50, start=50 * k, node=f"task-{k % 3}") for k in range(12)]

    async def writer(k: int) -> int:
        # Each writer also re-sends its neighbour's batch, as a retried activity would.
        mine = await store.record_events(RecordEventsInput(events=batches[k]))
        again = await store.record_events(RecordEventsInput(events=batches[(k + 1) % 12]))
        return mine + again

    writers = [asyncio.create_task(writer(k)) for k in range(12)]
    seen: list[StoredEvent] = []
    async with asyncio.timeout(30):
        async for event in store.watch(run, poll_s=0.005, stop=lambda: all(
                w.done() for w in writers)):
            seen.append(event)
    assert sum(w.result() for w in writers) == 600
    assert await store.count(run) == 600
    assert sorted(e.event.id for e in seen) == sorted(e.id for b in batches for e in b)
    assert [e.seq for e in seen] == sorted(e.seq for e in seen)


async def advisory_waiters(store: EventStore) -> int:
    async with store.engine.connect() as conn:
        return (await conn.execute(text(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ))).scalar_one()


@db
async def test_a_late_commit_cannot_be_skipped_by_a_watcher(store: EventStore) -> None:
    run = new_run()
    early, late = events(run, 1), events(run, 1, start=1)
    async with store.engine.begin() as conn:  # a slow writer: seq taken, not yet committed
        await insert_rows(conn, [event_row(e) for e in early])  # it locks the run
        fast = asyncio.create_task(store.record_events(RecordEventsInput(events=late)))
        async with asyncio.timeout(10):
            while await advisory_waiters(store) == 0:  # the fast writer queues behind it
                await asyncio.sleep(0.01)
        assert await store.events_after(run) == []
    assert await fast == 1
    got = await store.events_after(run)
    assert [e.event.id for e in got] == [early[0].id, late[0].id]
    assert got[0].seq < got[1].seq


@db
async def test_events_after_pages_through_a_run(store: EventStore) -> None:
    run = new_run()
    await store.record_events(RecordEventsInput(events=events(run, 250)))
    pages: list[list[StoredEvent]] = []
    last = 0
    while page := await store.events_after(run, last, limit=100):
        pages.append(page)
        last = page[-1].seq
    assert [len(p) for p in pages] == [100, 100, 50]
    assert [e.event.execution_order for p in pages for e in p] == list(range(250))
    with pytest.raises(ValueError, match="limit must be between 1 and"):
        await store.events_after(run, 0, limit=0)


@db
async def test_watch_yields_events_written_after_it_started(store: EventStore) -> None:
    run = new_run()
    received: list[StoredEvent] = []
    got_batch = asyncio.Event()
    done = False

    async def writer() -> None:
        nonlocal done
        for k in range(4):  # each batch only after the watcher has yielded the previous one
            got_batch.clear()
            await store.record_events(RecordEventsInput(events=events(run, 3, start=3 * k)))
            await got_batch.wait()
        done = True

    async with asyncio.timeout(20):
        task = asyncio.create_task(writer())
        async for event in store.watch(run, poll_s=0.005, stop=lambda: done):
            received.append(event)
            if len(received) % 3 == 0:
                got_batch.set()
        await task
    assert [e.event.execution_order for e in received] == list(range(12))


@db
async def test_oversize_and_unstorable_values_are_repaired(store: EventStore) -> None:
    run = new_run()
    base = events(run, 1)[0]
    huge = base.model_copy(update={"id": "huge", "outputs": {"stdout": "x" * 1_000_000}})
    many = base.model_copy(update={"id": "many", "inputs": {"rows": ["abc"] * 200_000}})
    odd = base.model_copy(update={
        "id": "odd", "status": "ok\x00", "outputs": {"loss": float("nan"), "log": "a\x00b"},
    })
    long_id = base.model_copy(update={"id": "e" * 5000, "parent_event_id": "p" * 5000})
    batch = RecordEventsInput(events=[base, huge, many, odd, long_id])
    assert await store.record_events(batch) == 5
    assert await store.record_events(batch) == 0  # digested ids stay idempotent

    got = {e.event.id: e.event for e in await store.events_after(run)}
    stdout = got["huge"].outputs["stdout"]
    assert stdout.startswith("x" * MAX_STRING_CHARS)
    assert stdout.endswith(f"…[truncated {1_000_000 - MAX_STRING_CHARS} chars]")
    assert got["huge"].meta["_truncated"] == ["outputs"]
    assert got["many"].inputs["_truncated"] is True
    assert len(json.dumps(got["many"].inputs)) <= MAX_JSON_BYTES
    assert got["odd"].status == "ok\ufffd"
    assert got["odd"].outputs == {"loss": "nan", "log": "a\ufffdb"}
    assert got[fit_key("e" * 5000)].parent_event_id == fit_key("p" * 5000)
    assert got[base.id] == base


@db
async def test_database_refusal_is_a_non_retryable_error(store: EventStore) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(
            "ALTER TABLE execution_events ADD CONSTRAINT no_forbidden CHECK (status <> 'forbidden')"
        ))
    bad = events(new_run(), 2)
    bad[1] = bad[1].model_copy(update={"status": "forbidden"})
    with pytest.raises(ApplicationError) as info:
        await store.record_events(RecordEventsInput(events=bad))
    assert info.value.type == "EventRejected"
    assert info.value.non_retryable
    assert bad[0].run_id in str(info.value)
    assert await store.count(bad[0].run_id) == 0  # the batch is one transaction


@db
async def test_open_is_idempotent_when_workers_start_together(postgres_server_url: str) -> None:
    url = await make_database(postgres_server_url)
    stores = [EventStore(url) for _ in range(4)]
    await asyncio.gather(*(s.open() for s in stores))
    await stores[0].open()
    run = new_run()
    assert await stores[1].record_events(RecordEventsInput(events=events(run, 3))) == 3
    assert await stores[2].count(run) == 3
    for s in stores:
        await s.close()


def test_malformed_event_is_rejected_with_the_missing_fields() -> None:
    raw = {"events": [{"id": "e1", "run_id": "r1", "timestamp": "2026-01-21T10:30:00Z"}]}
    with pytest.raises(ValidationError) as info:
        RecordEventsInput.model_validate(raw)
    message = str(info.value)
    assert "events.0.node_id" in message
    assert "events.0.event_type" in message
    assert "Field required" in message

    # The worker decodes activity input through the same converter and fails the same way.
    payloads = DATA_CONVERTER.payload_converter.to_payloads([raw])
    with pytest.raises(ValidationError, match="node_id"):
        DATA_CONVERTER.payload_converter.from_payloads(payloads, [RecordEventsInput])


async def test_store_that_was_not_opened_says_so() -> None:
    with pytest.raises(RuntimeError, match=r"await store.open\(\)"):
        await EventStore("postgresql+asyncpg://postgres@/nowhere").count("r")


def test_format_event_is_one_safe_line() -> None:
    event = events("r1", 1)[0].model_copy(update={
        "node_id": "step_3", "event_type": "code_exec", "depth": 2,
        "outputs": {"stdout": "Plot saved\n\x1b[2Jto spectrum.png"},
    })
    line = format_event(StoredEvent(seq=15, recorded_at=T0, event=event))
    assert line.startswith("2026-01-21T10:30:00.000Z  #15   ")
    assert "    step_3  code_exec/complete  completed  engineer 0ms" in line
    assert line.endswith("stdout=Plot saved [2Jto spectrum.png")
    assert "\n" not in line and "\x1b" not in line


async def test_unreachable_database_is_explained(tmp_path: Path) -> None:
    store = EventStore(f"postgresql+asyncpg://postgres:secret@/assay?host={tmp_path}")
    with pytest.raises(EventStoreUnavailable, match="cannot open the event store at") as info:
        await store.open()
    assert "assay up" in str(info.value)
    assert "secret" not in str(info.value)
    await store.close()
