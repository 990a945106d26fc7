"""MemoryStore as a whole: opened by several processes, and an unreachable database."""

from __future__ import annotations

import socket

import pytest

from activities.memory.store import MemoryStore, MemoryStoreUnavailable
from tests.activities.memory.store.support import db, entries


@db
async def test_opening_twice_is_harmless(fresh_database_url: str) -> None:
    async with MemoryStore(fresh_database_url) as first, \
            MemoryStore(fresh_database_url) as second:
        await first.append_ledger(entries("e1"))
        assert await second.verify_ledger() == 1


async def test_an_unreachable_database_is_explained() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = MemoryStore(f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/assay")
    with pytest.raises(MemoryStoreUnavailable) as caught:
        await store.open()
    await store.close()
    message = str(caught.value)
    assert f"cannot open the memory store at postgresql+asyncpg://ada:***@127.0.0.1:{port}" \
        in message
    assert "secret" not in message and "assay up" in message
