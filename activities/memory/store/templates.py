"""Procedural templates in PostgreSQL: job specs counted by clean success, cached once proven.

Writes for one task type are serialised (see :mod:`.writes`), so concurrent successes of the
same job are all counted; a stored body that is not a valid template is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.memory.promotion import template_cached
from activities.memory.schema import (
    TEMPLATES,
    job_checksum,
    read_template,
    template_id,
    template_row,
)
from activities.memory.store.writes import lock_type, upsert
from database.engine import Database
from workflows.contracts.memory import ProceduralTemplate, Promotion
from workflows.contracts.plan import JobSpec


async def _write_template(conn: AsyncConnection, template: ProceduralTemplate) -> None:
    await upsert(conn, TEMPLATES, "template_id", template_row(template))


class TemplateStore(Database):
    """The procedural templates part of :class:`~activities.memory.store.MemoryStore`."""

    async def note_clean_success(self, task_type: str, action: str, job: JobSpec,
                                 input_names: Sequence[str], now: datetime,
                                 promotion: Promotion = "auto") -> ProceduralTemplate:
        """Count one clean success of a job spec; cached once it has ``CACHE_AFTER`` of them.

        Under ``promotion="person"`` it is cached only once a person approves it.
        """
        digest = job_checksum(job)
        tid = template_id(task_type, digest)
        async with self.engine.begin() as conn:
            await lock_type(conn, task_type)
            body = (await conn.execute(select(TEMPLATES.c.body)
                                       .where(TEMPLATES.c.template_id == tid)
                                       .with_for_update())).scalar_one_or_none()
            current = read_template(body) if body is not None else None
            if current is None:
                current = ProceduralTemplate(
                    template_id=tid, task_type=task_type, action=action, job=job,
                    job_sha256=digest, input_names=list(input_names), created_at=now)
            count = current.clean_successes + 1
            updated = current.model_copy(update={
                "clean_successes": count,
                "cached": template_cached(current.cached, count, promotion)})
            await _write_template(conn, updated)
            return updated

    async def templates(self, task_type: str | None = None, *, cached_only: bool = True,
                        ) -> list[ProceduralTemplate]:
        """Templates, most clean successes first; rows that are not valid are skipped."""
        stmt = select(TEMPLATES.c.body)
        if task_type is not None:
            stmt = stmt.where(TEMPLATES.c.task_type == task_type)
        if cached_only:
            stmt = stmt.where(TEMPLATES.c.cached.is_(True))
        async with self.engine.connect() as conn:
            bodies = (await conn.execute(stmt)).scalars().all()
        found = [t for t in map(read_template, bodies) if t is not None]
        found.sort(key=lambda t: (-t.clean_successes, t.template_id))
        return found

    async def approve_template(self, template_id: str) -> ProceduralTemplate | None:
        """Cache a template a person approved; ``None`` if it is unknown or unreadable."""
        by_id = TEMPLATES.c.template_id == template_id
        async with self.engine.begin() as conn:
            body = (await conn.execute(select(TEMPLATES.c.body).where(by_id).with_for_update())
                    ).scalar_one_or_none()
            current = read_template(body) if body is not None else None
            if current is None:
                return None
            updated = current.model_copy(update={"cached": True})
            await _write_template(conn, updated)
            return updated

    async def note_template_use(self, template_id: str, *, success: bool, now: datetime,
                                ) -> ProceduralTemplate | None:
        """Count one use of a template (and its success); ``None`` if it is unknown."""
        by_id = TEMPLATES.c.template_id == template_id
        async with self.engine.begin() as conn:
            kind = (await conn.execute(select(TEMPLATES.c.task_type).where(by_id))
                    ).scalar_one_or_none()
            if kind is None:
                return None
            await lock_type(conn, kind)
            body = (await conn.execute(select(TEMPLATES.c.body).where(by_id).with_for_update())
                    ).scalar_one_or_none()
            current = read_template(body)
            if current is None:
                return None
            updated = current.model_copy(update={
                "uses": current.uses + 1, "successes": current.successes + int(success),
                "last_used": now})
            await _write_template(conn, updated)
            return updated
