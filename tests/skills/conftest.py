"""Fixtures the skill tests share: a SkillStore on a database of its own, and a library on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from skills.index import SkillIndex
from skills.library import SkillLibrary
from skills.store import SkillStore


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[SkillStore]:
    async with SkillStore(fresh_database_url) as opened:
        yield opened


@pytest.fixture
def library(store: SkillStore, tmp_path: Path) -> Iterator[SkillLibrary]:
    """The library's activities over ``store``, with an index of its own under ``tmp_path``."""
    opened = SkillLibrary(store, lambda: SkillIndex(tmp_path / "index"),
                          can_import=lambda _: True)
    yield opened
    opened.close()
