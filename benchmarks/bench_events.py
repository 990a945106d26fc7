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
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

import asyncpg

from activities.store import EventStore
from activities.store_schema import EVENT_COLUMNS
from workers.embedded import EmbeddedPostgres
from workflows.contracts import EventRecord, RecordEventsInput

TARGET = 5_000.0  # events/s, DESIGN §11


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


async def timed(label: str, n: int, write: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await write()
    rate = n / (time.perf_counter() - start)
    print(f"  {label:<48} {rate:>10,.0f} events/s")
    return rate


async def bench_store(store: EventStore, n: int, batch: int, *, again: bool = False) -> float:
    run = f"bench-{uuid.uuid4().hex[:8]}"
    reqs = [RecordEventsInput(events=make_events(run, n)[i : i + batch])
            for i in range(0, n, batch)]

    async def write() -> None:
        for req in reqs:
            await store.record_events(req)

    rate = await timed(f"EventStore.record_events, batch {batch}", n, write)
    if again:  # a retried activity: every id already stored
        await timed(f"  same events again (all duplicates), batch {batch}", n, write)
    return rate


async def bench_raw(conn: RawConnection, n: int, batch: int) -> None:
    cols = ", ".join(EVENT_COLUMNS)
    marks = ", ".join(f"${i}" for i in range(1, len(EVENT_COLUMNS) + 1))
    insert = f"INSERT INTO baseline ({cols}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING"
    for kind in ("copy", "executemany"):
        rows = [as_record(e) for e in make_events(f"raw-{uuid.uuid4().hex[:8]}", n)]
        chunks = [rows[i : i + batch] for i in range(0, n, batch)]

        async def write(chunks: list[list[tuple[Any, ...]]] = chunks, kind: str = kind) -> None:
            for chunk in chunks:
                if kind == "copy":
                    await conn.copy_records_to_table(
                        "baseline", records=chunk, columns=list(EVENT_COLUMNS))
                else:
                    await conn.executemany(insert, chunk)

        await timed(f"baseline asyncpg {kind}, batch {batch}", n, write)


async def run(n: int, pgdata: Path) -> None:
    pg = EmbeddedPostgres(pgdata)
    pg.start()
    try:
        pg.ensure_database("bench")
        async with EventStore(pg.url("bench")) as store:
            conn = cast(RawConnection, await asyncpg.connect(  # pyright: ignore[reportUnknownMemberType]
                host=str(pg.socket_dir), user="postgres", database="bench"))
            await conn.execute("CREATE TABLE baseline (LIKE execution_events INCLUDING ALL)")
            print(f"{n:,} events per case, {os.cpu_count()} CPUs, embedded PostgreSQL")
            rates: list[float] = []
            for batch in (100, 1_000):
                rates.append(await bench_store(store, n, batch, again=True))
                await bench_raw(conn, n, batch)
            await conn.close()
        verdict = "meets" if min(rates) >= TARGET else "MISSES"
        print(f"slowest store rate {min(rates):,.0f} events/s {verdict} the {TARGET:,.0f}/s target")
    finally:
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        asyncio.run(run(args.events, Path(tmp) / "pg"))


if __name__ == "__main__":
    main()
