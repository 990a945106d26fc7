"""The fixture every skill store test uses: a SkillStore on a database of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from skills.store import SkillStore


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[SkillStore]:
    async with SkillStore(fresh_database_url) as opened:
        yield opened
