"""Adding to the skill library: new skills all at once or not at all, built-ins on first start.

Every skill added is checked first (:func:`~skills.schema.skill_problems`) and recorded in the
audit trail with how it came (``created``, ``seeded``, ``imported``...).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from database.engine import Database
from skills.schema import SKILLS, SkillExists, skill_values, utc
from skills.store.rows import existing, lock_library, now, record, refuse_invalid
from workflows.contracts.patterns import Skill


async def _insert(conn: AsyncConnection, skills: Sequence[Skill], *, by: str, action: str,
                  detail: dict[str, Any] | None = None) -> list[Skill]:
    if not skills:
        return []
    at = now()
    stored = [s.model_copy(update={"created_at": utc(s.created_at or at), "updated_at": at})
              for s in skills]
    await conn.execute(SKILLS.insert(), [skill_values(s) for s in stored])
    await record(conn, by, [(s.skill_id, action,
                             {"status": s.status, "origin": s.origin, **(detail or {})})
                            for s in stored])
    return stored


class SkillAdditions(Database):
    """The adding part of :class:`~skills.store.SkillStore`."""

    async def add(self, skill: Skill, *, by: str, action: str = "created") -> Skill:
        """Add one skill in the name of ``by``; returns it as stored.

        Raises:
            SkillExists: a skill with this id (name and version) is already stored.
            SkillInvalid: the skill cannot be stored (bad name, NUL character, NaN).
        """
        return (await self.add_many([skill], by=by, action=action))[0]

    async def add_many(self, skills: Sequence[Skill], *, by: str, action: str = "created",
                       detail: dict[str, Any] | None = None) -> list[Skill]:
        """Add skills in one transaction: all of them, or none if any id is taken.

        Raises:
            SkillExists: ids already stored or given twice; every one is named.
            SkillInvalid: skills that cannot be stored; every problem is named.
        """
        refuse_invalid(skills)
        counts = Counter(skill.skill_id for skill in skills)
        twice = sorted(skill_id for skill_id, n in counts.items() if n > 1)
        async with self.engine.begin() as conn:
            await lock_library(conn)
            taken = sorted(await existing(conn, counts))
            if taken or twice:
                parts = ([f"already in the library: {', '.join(taken)}"] if taken else []) + (
                    [f"given twice: {', '.join(twice)}"] if twice else [])
                raise SkillExists(f"no skills added; {'; '.join(parts)}",
                                  sorted({*taken, *twice}))
            return await _insert(conn, skills, by=by, action=action, detail=detail)

    async def seed(self, skills: Sequence[Skill], *, by: str) -> list[str]:
        """Add the skills whose name has no row yet (built-ins on first start).

        Idempotent and safe when several workers seed at once; a name a person retired
        stays retired. Returns the ids added.

        Raises:
            SkillInvalid: skills that cannot be stored; nothing is added.
        """
        refuse_invalid(skills)
        async with self.engine.begin() as conn:
            await lock_library(conn)
            names = {skill.pattern.name for skill in skills}
            known = set((await conn.execute(select(SKILLS.c.name).distinct()
                                            .where(SKILLS.c.name.in_(names)))).scalars())
            fresh = {s.skill_id: s for s in skills if s.pattern.name not in known}
            added = await _insert(conn, list(fresh.values()), by=by, action="seeded")
            return [skill.skill_id for skill in added]
