"""Statements every part of the skill store shares: the write lock, rows, the audit trail.

Every write to the library holds one advisory lock and takes the next ``revision``, so
revisions grow in commit order; every change is written to ``skill_events`` in the same
transaction as the change itself.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from database.engine import advisory_lock
from skills.schema import (
    EVENTS,
    REVISION,
    SKILLS,
    SkillInvalid,
    SkillNotFound,
    read_skill,
    skill_problems,
    skill_values,
)
from workflows.contracts.patterns import Skill

_WRITE_LOCK = (0x41535353, 0)  # every write to the skill library
Entry = tuple[str, str, dict[str, Any]]
"""An audit entry to write: skill id, action, detail."""


def now() -> datetime:
    """The time a write is stamped with."""
    return datetime.now(UTC)


async def lock_library(conn: AsyncConnection) -> None:
    """Serialise writes to the skill library until the transaction ends."""
    await advisory_lock(conn, *_WRITE_LOCK)


def refuse_invalid(skills: Sequence[Skill]) -> None:
    """Raise :class:`SkillInvalid` naming every problem, if any skill cannot be stored."""
    problems = [problem for skill in skills for problem in skill_problems(skill)]
    if problems:
        raise SkillInvalid(problems)


async def record(conn: AsyncConnection, by: str, entries: Sequence[Entry]) -> None:
    """Append entries to the audit trail in the name of ``by``."""
    if entries:
        await conn.execute(EVENTS.insert(), [
            {"skill_id": skill_id, "by": by, "action": action, "detail": detail}
            for skill_id, action, detail in entries])


async def existing(conn: AsyncConnection, skill_ids: Collection[str]) -> set[str]:
    """Which of ``skill_ids`` the library holds."""
    if not skill_ids:
        return set()
    stmt = select(SKILLS.c.skill_id).where(SKILLS.c.skill_id.in_(list(skill_ids)))
    return set((await conn.execute(stmt)).scalars())


async def missing(conn: AsyncConnection, skill_id: str) -> SkillNotFound:
    """The error for an unknown id, suggesting the closest ids the library has."""
    known = list((await conn.execute(select(SKILLS.c.skill_id))).scalars())
    close = difflib.get_close_matches(skill_id, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return SkillNotFound(f"no skill {skill_id!r}{hint} (`assay skills list --all` lists them)")


async def read_locked(conn: AsyncConnection, skill_id: str) -> Skill:
    """One skill, its row locked until the transaction ends."""
    row = (await conn.execute(select(SKILLS).where(SKILLS.c.skill_id == skill_id)
                              .with_for_update())).mappings().first()
    if row is None:
        raise await missing(conn, skill_id)
    return read_skill(row)


async def write(conn: AsyncConnection, skill: Skill, at: datetime) -> Skill:
    """Replace the row of an existing skill; returns the skill as stored."""
    values = skill_values(skill)
    values.update(updated_at=at, revision=REVISION.next_value())
    if values["created_at"] is None:
        del values["created_at"]
    created = (await conn.execute(update(SKILLS).where(SKILLS.c.skill_id == skill.skill_id)
                                  .values(values).returning(SKILLS.c.created_at))).scalar_one()
    return skill.model_copy(update={"created_at": created, "updated_at": at})
