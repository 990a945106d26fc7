"""What every PostgreSQL-backed store shares: one async engine, its lifecycle, its messages."""

from __future__ import annotations

from typing import Self

from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncEngine


class Database:
    """An async engine opened by :meth:`open` (subclasses create their tables there).

    Args:
        database_url: A SQLAlchemy asyncpg URL, e.g.
            ``postgresql+asyncpg://postgres@/assay?host=/path/to/socketdir``.
    """

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._engine: AsyncEngine | None = None

    async def open(self) -> None:
        """Connect and prepare the store's tables."""
        raise NotImplementedError

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

    def unreachable(self, what: str, err: Exception) -> str:
        """Why ``what`` cannot be opened, naming the database without its password."""
        where = make_url(self._url).render_as_string(hide_password=True)
        return (f"cannot open the {what} at {where}: {err}. Start the embedded services with "
                "`assay up`, or set ASSAY_DATABASE_URL to a reachable PostgreSQL database.")
