"""Event ingestion rate of ``EventStore.record_events`` against raw asyncpg, same server, same rows.

Run: ``python -m benchmarks.bench_events [--events 20000]``. Starts a throw-away embedded
PostgreSQL, writes the same events through the store (batches of 100 and 1 000) and through two
baselines on a twin table: asyncpg ``copy_records_to_table`` (the fastest bulk path, no
idempotency) and asyncpg ``executemany`` of the same ``INSERT ... ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

import asyncpg

from activities.events.schema import EVENT_COLUMNS
from activities.events.store import EventStore
from workers.stack.embedded import EmbeddedPostgres
from workflows.contracts.execution import EventRecord, RecordEventsInput

TARGET = 5_000.0  # events/s: the event store's ingestion target


class RawConnection(Protocol):
    """The part of ``asyncpg.Connection`` the baselines use (asyncpg ships no type hints)."""

    async def execute(self, query: str) -> str: ...
    async def executemany(self, command: str, args: Iterable[Sequence[Any]]) -> None: ...
    async def copy_records_to_table(
        self, table_name: str, *, records: Iterable[Sequence[Any]], columns: list[str]
    ) -> str: ...
    async def close(self) -> None: ...


def make_events(run_id: str, n: int) -> list[EventRecord]:
    """Events shaped like a sandbox run's: small JSON payloads, a parent, an order."""
    now = datetime.now(UTC)
    return [
        EventRecord(
            id=f"{run_id}:{i}", run_id=run_id, node_id=f"task-{i % 7}", event_type="code_exec",
            event_subtype="complete", agent_name="engineer", timestamp=now, duration_ms=i % 997,
            execution_order=i, depth=i % 3, status="completed",
            inputs={"code": "import numpy as np\nprint(np.mean([1, 2, 3]))", "language": "python"},
            outputs={"stdout": "2.0", "exit_code": 0, "files_generated": ["out.json"]},
            meta={"attempt": 1}, parent_event_id=f"{run_id}:parent-{i // 10}",
        )
        for i in range(n)
    ]


def as_record(event: EventRecord) -> tuple[Any, ...]:
    """One row for raw asyncpg: JSON columns as text, like the store sends them."""
    row = event.model_dump()
    return tuple(json.dumps(row[c]) if c in ("inputs", "outputs", "meta") else row[c]
                 for c in EVENT_COLUMNS)


Rates = dict[str, list[float]]


async def timed(rates: Rates, label: str, n: int, write: Callable[[], Awaitable[object]]) -> None:
    start = time.perf_counter()
    await write()
    rates.setdefault(label, []).append(n / (time.perf_counter() - start))


async def bench_store(rates: Rates, store: EventStore, n: int, batch: int) -> None:
    run = f"bench-{uuid.uuid4().hex[:8]}"
    reqs = [RecordEventsInput(events=make_events(run, n)[i : i + batch])
            for i in range(0, n, batch)]

    async def write() -> None:
        for req in reqs:
            await store.record_events(req)

    await timed(rates, f"EventStore.record_events, batch {batch}", n, write)
    # A retried activity: every id is already stored.
    await timed(rates, f"  same events again (all duplicates), batch {batch}", n, write)


async def bench_raw(rates: Rates, conn: RawConnection, n: int, batch: int) -> None:
    cols = ", ".join(EVENT_COLUMNS)
    marks = ", ".join(f"${i}" for i in range(1, len(EVENT_COLUMNS) + 1))
    insert = f"INSERT INTO baseline ({cols}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING"
    for kind in ("copy_records_to_table", "executemany ON CONFLICT"):
        rows = [as_record(e) for e in make_events(f"raw-{uuid.uuid4().hex[:8]}", n)]
        chunks = [rows[i : i + batch] for i in range(0, n, batch)]

        async def write(chunks: list[list[tuple[Any, ...]]] = chunks, kind: str = kind) -> None:
            for chunk in chunks:
                if kind.startswith("copy"):
                    await conn.copy_records_to_table(
                        "baseline", records=chunk, columns=list(EVENT_COLUMNS))
                else:
                    await conn.executemany(insert, chunk)

        await timed(rates, f"baseline asyncpg {kind}, batch {batch}", n, write)


FLUSH_EVENTS = 5
"""Events in one of a workflow's flushes (3-8 in a one-task run)."""


async def flush_ms(store: EventStore, writes: int = 200) -> float:
    """Median milliseconds of one workflow flush: a few events of a run, in one transaction.

    The database's share of a ``record_events`` local activity; the rest of a flush's cost
    (~5 ms in a one-task run) is the local activity's round trip through the SDK.
    """
    samples: list[float] = []
    for _ in range(writes):
        req = RecordEventsInput(events=make_events(f"flush-{uuid.uuid4().hex[:8]}",
                                                   FLUSH_EVENTS))
        start = time.perf_counter()
        await store.record_events(req)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def report(rates: Rates, n: int, repeat: int) -> None:
    print(f"{n:,} events per case, median of {repeat} (min-max), {os.cpu_count()} CPUs, "
          "embedded PostgreSQL on a Unix socket")
    for label, values in rates.items():
        print(f"  {label:<52} {statistics.median(values):>8,.0f} events/s"
              f"  ({min(values):,.0f}-{max(values):,.0f})")
    store = [statistics.median(v) for k, v in rates.items() if k.startswith("EventStore")]
    verdict = "meets" if min(store) >= TARGET else "MISSES"
    print(f"slowest EventStore median {min(store):,.0f} events/s {verdict} the "
          f"{TARGET:,.0f}/s target")


async def run(n: int, repeat: int, pgdata: Path) -> None:
    pg = EmbeddedPostgres(pgdata)
    pg.start()
    try:
        pg.ensure_database("bench")
        rates: Rates = {}
        async with EventStore(pg.url("bench")) as store:
            conn = cast(RawConnection, await asyncpg.connect(  # pyright: ignore[reportUnknownMemberType]
                host=str(pg.socket_dir), user="postgres", database="bench"))
            await conn.execute("CREATE TABLE baseline (LIKE execution_events INCLUDING ALL)")
            for _ in range(repeat):
                for batch in (100, 1_000):
                    await bench_store(rates, store, n, batch)
                    await bench_raw(rates, conn, n, batch)
            await conn.close()
            flush = await flush_ms(store)
        report(rates, n, repeat)
        print(f"one workflow flush ({FLUSH_EVENTS} events of a run, one transaction): "
              f"median {flush:.2f} ms")
    finally:
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000, help="events per case")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median shown)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        asyncio.run(run(args.events, args.repeat, Path(tmp) / "pg"))


if __name__ == "__main__":
    main()
