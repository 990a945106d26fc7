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


def append_only_ddl(table: str) -> tuple[str, str]:
    """Statements that make ``table`` refuse UPDATE, DELETE and TRUNCATE (idempotent).

    Each runs on its own: an audit trail that PostgreSQL itself keeps append-only.
    """
    return (
        f"""CREATE OR REPLACE FUNCTION {table}_refuse_change() RETURNS trigger
       LANGUAGE plpgsql AS $$
       BEGIN
         RAISE EXCEPTION '{table} is append-only: % refused', TG_OP
           USING ERRCODE = 'insufficient_privilege';
       END $$""",
        f"""DO $$ BEGIN
         IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{table}'::regclass
                        AND tgname = '{table}_append_only') THEN
           CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
             FOR EACH ROW EXECUTE FUNCTION {table}_refuse_change();
         END IF;
         IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{table}'::regclass
                        AND tgname = '{table}_no_truncate') THEN
           CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
             FOR EACH STATEMENT EXECUTE FUNCTION {table}_refuse_change();
         END IF;
       END $$""")
