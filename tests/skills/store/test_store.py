"""SkillStore as a whole: opened by several workers at once, and an unreachable database."""

from __future__ import annotations

import asyncio
import socket

import pytest

from skills.store import SkillStore, SkillStoreUnavailable
from tests.skills.store.support import db, make_skill


@db
async def test_open_is_idempotent_when_several_workers_open_at_once(
        fresh_database_url: str) -> None:
    stores = [SkillStore(fresh_database_url) for _ in range(4)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        await stores[0].open()
        await stores[1].add(make_skill(), by="ada")
        assert [s.skill_id for s in await stores[2].list()] == ["csv-profile@v1"]
    finally:
        await asyncio.gather(*(s.close() for s in stores))



async def test_an_unreachable_database_is_explained() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    store = SkillStore(f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/assay")
    with pytest.raises(SkillStoreUnavailable) as err:
        await store.open()
    await store.close()
    message = str(err.value)
    assert message.startswith("cannot open the skill library at "
                              "postgresql+asyncpg://ada:***@127.0.0.1")
    assert "assay up" in message and "secret" not in message
