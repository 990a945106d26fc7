"""Reading the skill library: one skill, lists and families, changes since a revision, audits.

A row that is no longer a valid skill (edited straight in the database) is never used: reads
of many rows leave it out and say why; reading it by id raises
:class:`~skills.schema.SkillUnreadable`.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field
from sqlalchemy import or_, select

from database.engine import Database
from skills.schema import EVENTS, SKILLS, STATUSES, SkillUnreadable, read_skill
from skills.store.rows import existing, missing
from workflows.contracts.base import Model
from workflows.contracts.patterns import Skill

log = logging.getLogger(__name__)


class SkillEvent(Model):
    """One entry of a skill's audit trail."""

    seq: int
    skill_id: str
    at: datetime
    by: str
    action: str
    """``created``, ``seeded``, ``imported``, ``approved``, ``trial``, ``promoted``,
    ``retired``, ``flagged``, ``revived``, ``used``, or what a caller of ``save`` names."""
    detail: dict[str, Any] = Field(default_factory=dict[str, Any])


def _parsed(rows: Sequence[Mapping[Any, Any]]) -> tuple[builtins.list[Skill], builtins.list[str]]:
    skills: builtins.list[Skill] = []
    problems: builtins.list[str] = []
    for row in rows:
        try:
            skills.append(read_skill(row))
        except SkillUnreadable as err:
            problems.append(str(err))
    return skills, problems


class SkillQueries(Database):
    """The reading part of :class:`~skills.store.SkillStore`."""

    async def get(self, skill_id: str) -> Skill:
        """One skill.

        Raises:
            SkillNotFound: no skill has this id (the message suggests close ones).
            SkillUnreadable: the stored row is not a valid skill.
        """
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(SKILLS).where(SKILLS.c.skill_id == skill_id))
                   ).mappings().first()
            if row is None:
                raise await missing(conn, skill_id)
        return read_skill(row)

    async def scan(self, statuses: Collection[str] | None = None, *, name: str | None = None,
                   ) -> tuple[builtins.list[Skill], builtins.list[str]]:
        """Skills ordered by name and version, and one line per row that is not a valid skill.

        Args:
            statuses: Only skills with one of these statuses (``None``: all).
            name: Only this family (every version of one name).

        Raises:
            ValueError: a status is not a skill status.
        """
        unknown = sorted(set(statuses or ()) - set(STATUSES))
        if unknown:
            raise ValueError(f"unknown status {', '.join(unknown)}: use "
                             f"{', '.join(STATUSES)}")
        stmt = select(SKILLS).order_by(SKILLS.c.name, SKILLS.c.version)
        if statuses is not None:  # rows of no known status are read too, to be reported
            stmt = stmt.where(or_(SKILLS.c.status.in_(builtins.list(statuses)),
                                  SKILLS.c.status.not_in(STATUSES)))
        if name is not None:
            stmt = stmt.where(SKILLS.c.name == name)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return _parsed(rows)

    async def list(self, statuses: Collection[str] | None = None, *, name: str | None = None,
                   ) -> builtins.list[Skill]:
        """Skills ordered by name and version; rows that are not valid skills are logged.

        Raises:
            ValueError: a status is not a skill status.
        """
        skills, problems = await self.scan(statuses, name=name)
        for problem in problems:
            log.warning("%s", problem)
        return skills

    async def family(self, name: str) -> builtins.list[Skill]:
        """Every version of one skill, oldest first."""
        return await self.list(name=name)

    async def changes_since(self, revision: int) -> tuple[int, builtins.list[Skill]]:
        """The skills written after ``revision``, and the revision to ask from next time.

        Rows that are not valid skills are logged and left out (their revision still counts).
        """
        stmt = select(SKILLS).where(SKILLS.c.revision > revision).order_by(SKILLS.c.revision)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        skills, problems = _parsed(rows)
        for problem in problems:
            log.warning("%s", problem)
        return (rows[-1]["revision"] if rows else revision), skills

    async def events(self, skill_id: str) -> builtins.list[SkillEvent]:
        """The audit trail of one skill, oldest first.

        Raises:
            SkillNotFound: no skill has this id.
        """
        async with self.engine.connect() as conn:
            if not await existing(conn, [skill_id]):
                raise await missing(conn, skill_id)
            rows = (await conn.execute(select(EVENTS).where(EVENTS.c.skill_id == skill_id)
                                       .order_by(EVENTS.c.seq))).mappings().all()
        return [SkillEvent.model_validate(dict(row)) for row in rows]
