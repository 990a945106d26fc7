"""The memory ledger: appended once, hash-chained, append-only, and still the format it was.

``tests/data/ledgers/memory_ledger.json`` holds rows as the release before the shared chain
module (:mod:`activities.common.chain`) wrote them: today's code must write the same digests
and accept those rows as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import DBAPIError

from activities.memory.schema import LEDGER
from activities.memory.store import LedgerBroken, LedgerEntry, MemoryStore
from activities.memory.store.ledger import LINKED
from tests.activities.memory.store.support import db, entries, sql

EARLIER = Path(__file__).resolve().parents[3] / "data" / "ledgers" / "memory_ledger.json"


def earlier_rows() -> list[dict[str, Any]]:
    return json.loads(EARLIER.read_text(encoding="utf-8"))


@db
async def test_ledger_appends_once_and_chains(store: MemoryStore) -> None:
    assert await store.append_ledger(entries("e1", "e2", "e2", "e3")) == 3
    assert await store.append_ledger(entries("e1", "e2", "e3")) == 0
    assert await store.append_ledger([*entries("e3"), *entries("e4", run="run-2")]) == 1
    assert await store.verify_ledger() == 4

    rows = await store.ledger()
    assert [r["entry_id"] for r in rows] == ["e1", "e2", "e3", "e4"]
    assert rows[0]["prev"] == "0" * 64
    assert [r["prev"] for r in rows[1:]] == [r["sha256"] for r in rows[:-1]]
    assert [r["entry_id"] for r in await store.ledger("run-2")] == ["e4"]
    assert [r["entry_id"] for r in await store.ledger(limit=2)] == ["e3", "e4"]


@db
@pytest.mark.parametrize("statement", [
    "UPDATE memory_ledger SET kind = 'note'",
    "DELETE FROM memory_ledger WHERE entry_id = 'e2'",
    "TRUNCATE memory_ledger",
])
async def test_the_ledger_refuses_changes(store: MemoryStore, statement: str) -> None:
    await store.append_ledger(entries("e1", "e2"))
    with pytest.raises(DBAPIError, match="memory_ledger is append-only"):
        await sql(store, statement)
    assert await store.verify_ledger() == 2


@db
@pytest.mark.parametrize(("tamper", "message"), [
    ("UPDATE memory_ledger SET body = '{\"rule_id\": \"forged\"}' WHERE seq = 2",
     "broken at seq 2 (entry e2): its content no longer matches its checksum"),
    ("UPDATE memory_ledger SET sha256 = repeat('a', 64) WHERE seq = 2",
     "broken at seq 2 (entry e2): its content no longer matches"),
    ("DELETE FROM memory_ledger WHERE seq = 2",
     "broken at seq 3 (entry e3): it does not carry the checksum of the entry before it"),
])
async def test_verify_finds_a_tampered_ledger(store: MemoryStore, tamper: str,
                                              message: str) -> None:
    await store.append_ledger(entries("e1", "e2", "e3"))
    await sql(store, "ALTER TABLE memory_ledger DISABLE TRIGGER ALL")
    await sql(store, tamper)
    await sql(store, "ALTER TABLE memory_ledger ENABLE TRIGGER ALL")
    with pytest.raises(LedgerBroken) as caught:
        await store.verify_ledger()
    assert message in str(caught.value)


@db
async def test_entries_are_chained_as_earlier_releases_chained_them(store: MemoryStore) -> None:
    rows = earlier_rows()
    await store.append_ledger([LedgerEntry.model_validate({name: row[name] for name in LINKED})
                               for row in rows])
    written = await store.ledger()
    assert [(r["prev"], r["sha256"]) for r in written] == [(r["prev"], r["sha256"]) for r in rows]


@db
async def test_a_ledger_written_by_an_earlier_release_still_verifies(store: MemoryStore) -> None:
    rows = earlier_rows()
    async with store.engine.begin() as conn:
        await conn.execute(LEDGER.insert(), rows)
    assert await store.verify_ledger() == len(rows) == 4
    await sql(store, "ALTER TABLE memory_ledger DISABLE TRIGGER ALL")
    await sql(store, "UPDATE memory_ledger SET task_id = 'z' WHERE entry_id = 'rule-1'")
    await sql(store, "ALTER TABLE memory_ledger ENABLE TRIGGER ALL")
    with pytest.raises(LedgerBroken, match=r"broken at seq 3 \(entry rule-1\): its content"):
        await store.verify_ledger()
