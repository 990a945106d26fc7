"""The fixture every memory store test uses: a MemoryStore on a database of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.memory.store import MemoryStore


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[MemoryStore]:
    async with MemoryStore(fresh_database_url) as opened:
        yield opened
