"""Changing skills in the library: replacing what is stored, and moving a skill's status.

Status moves follow :data:`~skills.schema.MOVES`; approving a version retires the family's
active one in the same transaction, and every move is written to the audit trail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from database.engine import Database
from skills.schema import (
    REVISION,
    SKILLS,
    SkillInvalid,
    SkillStatusError,
    default_note,
    move_action,
    move_problem,
)
from skills.store.rows import (
    existing,
    lock_library,
    missing,
    now,
    read_locked,
    record,
    refuse_invalid,
    write,
)
from workflows.contracts.patterns import Skill


async def _replace_active(conn: AsyncConnection, approved: Skill, at: datetime) -> list[str]:
    """Retire the other active versions of ``approved``'s family; returns their ids."""
    stmt = (update(SKILLS)
            .where(SKILLS.c.name == approved.pattern.name, SKILLS.c.status == "active",
                   SKILLS.c.skill_id != approved.skill_id)
            .values(status="retired", note=f"replaced by {approved.skill_id}", share=0.0,
                    updated_at=at, revision=REVISION.next_value())
            .returning(SKILLS.c.skill_id))
    return sorted((await conn.execute(stmt)).scalars())


def _moved(current: Skill, status: str, note: str, by: str, share: float | None) -> Skill:
    """``current`` moved to ``status``: its note, share and (on approval) deviations reset."""
    changed: dict[str, Any] = {
        "status": status, "note": note or default_note(current.status, status, by),
        "share": (current.share if share is None else share) if status == "trial" else 0.0}
    if status in ("active", "trial"):
        changed["metrics"] = current.metrics.model_copy(update={"deviations": 0})
    return current.model_copy(update=changed)


class SkillChanges(Database):
    """The changing part of :class:`~skills.store.SkillStore`."""

    async def save(self, skill: Skill, *, by: str, action: str,
                   detail: dict[str, Any] | None = None) -> Skill:
        """Replace everything stored for an existing skill and record ``action``.

        Raises:
            SkillNotFound: no skill has this id.
            SkillInvalid: the skill cannot be stored.
        """
        return (await self.save_many([skill], by=by, action=action, detail=detail))[0]

    async def save_many(self, skills: Sequence[Skill], *, by: str, action: str,
                        detail: dict[str, Any] | None = None) -> list[Skill]:
        """Replace several existing skills in one transaction (a merge: survivor and absorbed).

        Raises:
            SkillNotFound: one of them is not stored; nothing is written.
            SkillInvalid: one cannot be stored, or an id is given twice.
        """
        refuse_invalid(skills)
        twice = sorted(i for i, n in Counter(s.skill_id for s in skills).items() if n > 1)
        if twice:
            raise SkillInvalid([f"skill {skill_id} is given twice" for skill_id in twice])
        async with self.engine.begin() as conn:
            await lock_library(conn)
            known = await existing(conn, [s.skill_id for s in skills])
            for skill in skills:
                if skill.skill_id not in known:
                    raise await missing(conn, skill.skill_id)
            at = now()
            stored = [await write(conn, skill, at) for skill in skills]
            await record(conn, by, [(s.skill_id, action, dict(detail or {})) for s in stored])
            return stored

    async def set_status(self, skill_id: str, status: str, *, by: str, note: str = "",
                         share: float | None = None) -> Skill:
        """Move a skill to another status in the name of ``by``.

        Allowed: candidate → active, trial or retired; trial → active or retired; active →
        retired or candidate (flagged back to review); retired → candidate (revived).
        Approving a version to ``active`` retires the family's active version in the same
        transaction; approving (to active or trial) clears the count of major deviations.

        Args:
            skill_id: The skill to move.
            status: The new status.
            by: Who moves it.
            note: Why (default: what was done and by whom).
            share: For ``trial``: the share of matching tasks it is given, in (0, 1].

        Raises:
            SkillNotFound: no skill has this id.
            SkillStatusError: the move is not allowed (the message says which are).
            SkillUnreadable: the stored row is not a valid skill.
        """
        async with self.engine.begin() as conn:
            await lock_library(conn)
            current = await read_locked(conn, skill_id)
            problem = move_problem(current, status, share)
            if problem:
                raise SkillStatusError(problem)
            at = now()
            replaced = await _replace_active(conn, current, at) if status == "active" else []
            stored = await write(conn, _moved(current, status, note, by, share), at)
            detail: dict[str, Any] = {"from": current.status, "to": status, "note": stored.note}
            if status == "trial":
                detail["share"] = stored.share
            await record(conn, by, [
                (old, "retired", {"from": "active", "to": "retired", "replaced_by": skill_id})
                for old in replaced] + [(skill_id, move_action(current.status, status), detail)])
            return stored
