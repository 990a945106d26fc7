"""A store opening a database at the newest revision checks it without Alembic (real PostgreSQL).

Every command that reads the database opens a store, and a store brings its database to the
newest revision first; in the usual case there is nothing to do, and importing Alembic and the
revisions' modules to find that out took longer than many commands' own work.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

import database.migrations
from database.migrations import head, newest_file, upgrade
from tests.database.test_migrations import command_downgrade, versions

OPEN_AND_TELL = """
import asyncio, sys
from activities.memory.store import MemoryStore

async def main() -> None:
    async with MemoryStore(sys.argv[1]):
        pass

asyncio.run(main())
print(sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] == "alembic"}))
"""


def imported_alembic(url: str) -> bool:
    """Whether a fresh process that opens a store on ``url`` imported Alembic."""
    done = subprocess.run([sys.executable, "-c", OPEN_AND_TELL, url], capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip() == "['alembic']"


def test_the_newest_revision_is_read_from_the_file_names_as_alembic_finds_it() -> None:
    scripts = ScriptDirectory(str(Path(database.migrations.__file__).parent))
    assert newest_file() == head()
    numbered = sorted(scripts.walk_revisions(), key=lambda s: s.revision)
    for before, script in zip([None, *numbered], numbered, strict=False):
        assert script.path is not None
        # each file is named by its revision, and follows the one numbered before it
        assert re.fullmatch(rf"{script.revision}_\w+\.py", Path(script.path).name)
        assert script.down_revision == (before.revision if before else None)


@pytest.mark.integration
async def test_a_store_opens_a_current_database_without_importing_alembic(
        fresh_database_url: str) -> None:
    engine = create_async_engine(fresh_database_url)
    try:
        assert imported_alembic(fresh_database_url)  # a new database: migrated through Alembic
        assert await versions(engine) == [head()]
        assert not imported_alembic(fresh_database_url)
    finally:
        await engine.dispose()


@pytest.mark.integration
async def test_a_database_a_revision_behind_is_still_upgraded(fresh_database_url: str) -> None:
    engine = create_async_engine(fresh_database_url)
    try:
        await upgrade(engine)
        async with engine.begin() as conn:
            await conn.run_sync(lambda sync: command_downgrade(sync, "0003"))
        assert await upgrade(engine) == ("0003", head())
        assert await upgrade(engine) == (head(), head())
        async with engine.begin() as conn:  # a revision this version does not know
            await conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
        with pytest.raises(database.migrations.SchemaUnknown, match="revision 0099"):
            await upgrade(engine)
    finally:
        await engine.dispose()
