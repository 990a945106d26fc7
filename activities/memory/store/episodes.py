"""Episodes in PostgreSQL: one row per attempt at a task, stored once and pruned by age.

An episode is inserted with ``ON CONFLICT DO NOTHING``, so a retried activity stores it once;
a stored row that is no longer a valid episode is skipped by readers, never raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import ValidationError
from sqlalchemy import delete, func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from activities.memory.schema import EPISODES, episode_row
from database.engine import Database
from workflows.contracts.memory import Episode


class EpisodeStore(Database):
    """The episodes part of :class:`~activities.memory.store.MemoryStore`."""

    async def record_episodes(self, episodes: Sequence[Episode]) -> int:
        """Store episodes, skipping ids already stored; returns how many were new."""
        if not episodes:
            return 0
        stmt = (pg_insert(EPISODES).on_conflict_do_nothing(index_elements=["episode_id"])
                .returning(EPISODES.c.episode_id))
        async with self.engine.begin() as conn:
            result = await conn.execute(stmt, [episode_row(e) for e in episodes])
            return len(result.all())

    async def episodes(self, task_type: str | None = None, *, root_cause: str | None = None,
                       limit: int = 200) -> list[Episode]:
        """Up to ``limit`` episodes, newest first, of one task type (or all).

        A stored row that is no longer a valid episode is skipped, never raised.
        """
        stmt = select(EPISODES).order_by(EPISODES.c.recorded_at.desc(),
                                         EPISODES.c.episode_id.desc()).limit(max(limit, 0))
        if task_type is not None:
            stmt = stmt.where(EPISODES.c.task_type == task_type)
        if root_cause is not None:
            stmt = stmt.where(EPISODES.c.root_cause == root_cause)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        found: list[Episode] = []
        for row in rows:
            try:
                found.append(Episode.model_validate(dict(row)))
            except ValidationError:
                continue
        return found

    async def failure_tasks(self, task_type: str, root_cause: str) -> int:
        """How many distinct tasks (run, task) of a type failed with this root cause."""
        pairs = (select(EPISODES.c.run_id, EPISODES.c.task_id).distinct()
                 .where(EPISODES.c.task_type == task_type,
                        EPISODES.c.root_cause == root_cause,
                        EPISODES.c.outcome != "success")
                 .subquery())
        async with self.engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(pairs)))
                       .scalar_one())

    async def prune(self, now: datetime, *, keep: int = 100, max_age_days: float = 30,
                    task_type: str | None = None) -> int:
        """Delete episodes older than ``max_age_days`` and all but the newest ``keep`` per type.

        One statement, ranking each type's episodes by ``recorded_at`` then ``episode_id``.

        Returns:
            How many episodes were deleted.
        """
        if keep < 0 or max_age_days < 0:
            raise ValueError(f"keep and max_age_days must not be negative, got {keep} and "
                             f"{max_age_days}")
        rank = func.row_number().over(
            partition_by=EPISODES.c.task_type,
            order_by=(EPISODES.c.recorded_at.desc(), EPISODES.c.episode_id.desc()))
        ranked = select(EPISODES.c.episode_id, EPISODES.c.recorded_at, rank.label("rank"))
        if task_type is not None:
            ranked = ranked.where(EPISODES.c.task_type == task_type)
        sub = ranked.subquery()
        stmt = delete(EPISODES).where(
            EPISODES.c.episode_id == sub.c.episode_id,
            or_(sub.c.rank > keep, sub.c.recorded_at < now - timedelta(days=max_age_days)))
        async with self.engine.begin() as conn:
            return (await conn.execute(stmt)).rowcount
