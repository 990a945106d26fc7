"""What rule and template writes share: one lock per task type, and the upsert they store by.

Two workers learning from the same kind of task at once would otherwise read the same counts
and lose one of the updates; the lock makes the second wait for the first to commit.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from database.engine import advisory_lock

_TYPE_LOCK_CLASS = 0x4153534D  # rule and template writes, per task type


async def lock_type(conn: AsyncConnection, task_type: str) -> None:
    """Serialise rule and template writes for one task type until the transaction ends."""
    await advisory_lock(conn, _TYPE_LOCK_CLASS, task_type)


async def upsert(conn: AsyncConnection, table: Table, key: str, values: dict[str, Any]) -> None:
    """Insert ``values`` into ``table``, or replace the row whose ``key`` column matches."""
    stmt = pg_insert(table).values(values)
    await conn.execute(stmt.on_conflict_do_update(
        index_elements=[key], set_={name: stmt.excluded[name] for name in values if name != key}))
