"""Assay's database schema, one revision at a time: bring a database to the newest one.

Tables are declared once, as the SQLModel rows of each capability's ``schema`` module; every
change to them is a revision under ``versions/`` (Alembic) that takes a database from the
revision before to its own, and a test checks that the newest revision builds exactly what the
rows declare. Every store applies the revisions its database lacks when it opens (so a worker
at start, and ``assay up`` through its workers, migrate), and ``assay migrate`` does it on
demand.

Revisions run in one transaction under an advisory lock, so processes opening at once migrate
once: the others wait, then find the schema current. A database made before migrations (the
tables, no ``alembic_version``) is adopted: what that release had not created yet is added, it
is stamped with the baseline and upgraded from there, and no row is touched. Alembic is
configured here, in code; no ``alembic.ini`` is read.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = ["SchemaUnknown", "head", "revisions", "upgrade"]

SCHEMA_LOCK = (0x41535344, 0)
"""The advisory lock (class, key) every schema change holds until its transaction ends."""
_HERE = Path(__file__).parent
_NUMBERED = re.compile(r"(\d{4})_\w+\.py")
"""A revision's file: its revision id, four digits, then its name."""


class SchemaUnknown(RuntimeError):
    """The database is at a revision this version of Assay does not know (a newer one's)."""


@cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(_HERE))


@cache
def _known() -> frozenset[str]:
    return frozenset(script.revision for script in _scripts().walk_revisions())


def head() -> str:
    """The newest revision this version of Assay knows."""
    newest = _scripts().get_current_head()
    if newest is None:  # the package ships the baseline at least
        raise SchemaUnknown("no schema revisions are installed with Assay: reinstall it")
    return newest


@cache
def newest_file() -> str:
    """The newest revision, read from the names of the files under ``versions/``.

    Revisions are numbered one after another (``0004_task_kinds.py`` is revision ``0004``,
    after ``0003``), so the newest is the highest number: what :func:`head` finds through
    Alembic, without importing it (``tests/database/test_revision_check.py`` checks they agree).
    """
    numbers = [m.group(1) for f in (_HERE / "versions").iterdir()
               if (m := _NUMBERED.fullmatch(f.name))]
    if not numbers:
        raise SchemaUnknown("no schema revisions are installed with Assay: reinstall it")
    return max(numbers)


def _at_newest(connection: Connection) -> bool:
    """Whether the database is at the newest revision, read with two queries and no Alembic.

    The usual case of every store's opening, and so of every command that reads the
    database: Alembic and the revisions' modules take longer to import than the command's
    own work.
    """
    if connection.execute(text("SELECT to_regclass('alembic_version')")).scalar() is None:
        return False
    found = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return found == [newest_file()]


def _current(connection: Connection) -> str | None:
    """The database's revision (``None`` before any), if this version of Assay knows it.

    Raises:
        SchemaUnknown: a newer version of Assay migrated the database.
    """
    from alembic.runtime.migration import MigrationContext

    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is not None and revision not in _known():
        raise SchemaUnknown(
            f"the database schema is at revision {revision}, which this version of Assay does "
            f"not know (its newest is {head()}): a newer Assay migrated it, so upgrade Assay, "
            "or set ASSAY_DATABASE_URL to another database")
    return revision


def _made_before_migrations(connection: Connection) -> bool:
    """Whether an unversioned database holds tables a release before migrations created."""
    from database.migrations import baseline

    return bool(baseline.TABLES & set(inspect(connection).get_table_names()))


def _config(connection: Connection) -> Config:
    """Alembic's configuration, in code: the revisions here, run on ``connection``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_HERE).replace("%", "%%"))  # ini escaping
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> tuple[str | None, str]:
    if _at_newest(connection):  # the usual case, answered without importing Alembic
        return newest_file(), newest_file()
    from alembic import command

    from database.migrations import baseline

    newest = head()
    if _current(connection) == newest:  # reached by its own path: nothing to do
        return newest, newest
    lock_class, key = SCHEMA_LOCK
    connection.execute(text("SELECT pg_advisory_xact_lock(:c, :k)"), {"c": lock_class, "k": key})
    before = _current(connection)  # again: another process may have migrated meanwhile
    if before != newest:
        config = _config(connection)
        if before is None and _made_before_migrations(connection):
            baseline.create_schema(connection, missing_only=True)
            command.stamp(config, baseline.REVISION)
        command.upgrade(config, "head")
    return before, newest


async def upgrade(engine: AsyncEngine) -> tuple[str | None, str]:
    """Bring the database to the newest revision; returns its revision before and after.

    Raises:
        SchemaUnknown: a newer version of Assay migrated the database.
        sqlalchemy.exc.DBAPIError: the database cannot be reached, or refused a revision.
    """
    async with engine.begin() as conn:
        return await conn.run_sync(_upgrade)


async def revisions(engine: AsyncEngine) -> tuple[str | None, str]:
    """The database's revision (``None`` before any) and the newest one; changes nothing.

    Raises:
        SchemaUnknown: a newer version of Assay migrated the database.
    """
    async with engine.connect() as conn:
        return await conn.run_sync(_current), head()
