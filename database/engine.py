"""What every PostgreSQL-backed store shares: one async engine, its lifecycle, its locks.

The event store, the memory store and the skill library are each a :class:`Database` that
names itself and its error. Opening any of them connects and brings the whole schema up to
date (see :mod:`database.migrations`), so whichever process opens a store first
after an upgrade of Assay migrates the database, and every other one finds it ready.
"""

from __future__ import annotations

from typing import ClassVar, Self

from sqlalchemy import make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from database.limits import serialize
from database.migrations import SchemaUnknown, upgrade


class DatabaseUnavailable(RuntimeError):
    """A database cannot be reached or prepared; the message says which, why and what to do."""


def unreachable(url: str, what: str, err: Exception) -> str:
    """Why ``what`` at ``url`` cannot be opened and how to fix it, without the password."""
    where = make_url(url).render_as_string(hide_password=True)
    return (f"cannot open the {what} at {where}: {err}. Start the embedded services with "
            "`assay up`, or set ASSAY_DATABASE_URL to a reachable PostgreSQL database.")


async def advisory_lock(conn: AsyncConnection, lock_class: int, key: int | str) -> None:
    """Hold the advisory lock (``lock_class``, ``key``) until ``conn``'s transaction ends.

    A text key (a run id, a task type) is hashed by PostgreSQL, so any name can be one.
    """
    key_sql = "hashtext(:k)" if isinstance(key, str) else ":k"
    await conn.execute(text(f"SELECT pg_advisory_xact_lock(:c, {key_sql})"),
                       {"c": lock_class, "k": key})


class Database:
    """An async engine opened by :meth:`open` and released by :meth:`close`.

    Subclasses name what they are (``what``, used in messages) and the error an unreachable
    database raises (``unavailable``).

    Args:
        database_url: A SQLAlchemy asyncpg URL, e.g.
            ``postgresql+asyncpg://postgres@/assay?host=/path/to/socketdir``.
    """

    what: ClassVar[str] = "database"
    unavailable: ClassVar[type[DatabaseUnavailable]] = DatabaseUnavailable

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._engine: AsyncEngine | None = None

    async def open(self) -> None:
        """Connect and bring the schema to the newest revision.

        Safe when several processes open at once: migrations run under an advisory lock, so
        the second one waits and then finds the schema up to date.

        Raises:
            DatabaseUnavailable: (the subclass's ``unavailable``) the server or database
                cannot be reached, or its schema is newer than this version of Assay.
        """
        if self._engine is None:
            # No pool_pre_ping: it costs a round trip per statement, and a connection broken by
            # a database restart fails one attempt, is discarded, and the retry goes through.
            self._engine = create_async_engine(self._url, json_serializer=serialize)
        try:
            await upgrade(self._engine)
        except (OSError, DBAPIError) as err:
            raise self.unavailable(unreachable(self._url, self.what, err)) from err
        except SchemaUnknown as err:
            raise self.unavailable(f"cannot open the {self.what}: {err}") from err

    async def close(self) -> None:
        """Release every pooled connection."""
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def engine(self) -> AsyncEngine:
        """The open engine; a clear error if :meth:`open` was not called."""
        if self._engine is None:
            raise RuntimeError(f"{type(self).__name__} is not open: call "
                               "`await store.open()` first")
        return self._engine
