"""Counting how skills are used: retrievals, and each task's use of a skill, once per task.

A use is counted only when the task's job shows it (:mod:`skills.utilisation`); an offer the
task did not take is noted in the audit trail (``unused``) and counts nothing more.

Several workers recording uses at once cannot lose a count, and a use recorded twice (a
retried activity) counts once: ``skill_uses`` is keyed by the task. A skill that deviates
badly too often in a row goes back to review.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, get_args

from sqlalchemy import case, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from database.engine import Database
from skills.schema import EVENTS, REVISION, SKILLS, USES, utc
from skills.store.rows import Entry, existing, lock_library, now, read_locked, record, write
from workflows.contracts.patterns import Deviation, Skill, SkillMetrics
from workflows.library.formulas import FLAG_AFTER_DEVIATIONS

_DEVIATIONS: tuple[str, ...] = get_args(Deviation)
UNUSED = "unused"
"""The audit trail's action for a task that was offered a skill and did not use it."""


def _use_problem(key: str, deviation: str, duration_s: float, cost_usd: float) -> str | None:
    if not key.strip():
        return "the key (run_id/task_id) is empty"
    if deviation not in _DEVIATIONS:
        return f"unknown deviation {deviation!r}: use {', '.join(_DEVIATIONS)}"
    for name, value in (("duration_s", duration_s), ("cost_usd", cost_usd)):
        if not math.isfinite(value) or value < 0:
            return f"{name} must be a finite number of at least 0, not {value!r}"
    return None


def _counted(m: SkillMetrics, *, succeeded: bool, duration_s: float, cost_usd: float,
             at: datetime, deviation: Deviation) -> SkillMetrics:
    """The metrics with one more use; a major deviation adds to the run, others reset it."""
    last = utc(at) if m.last_used is None else max(utc(m.last_used), utc(at))
    return m.model_copy(update={
        "used": m.used + 1, "succeeded": m.succeeded + int(succeeded),
        "total_duration_s": m.total_duration_s + duration_s,
        "total_cost_usd": m.total_cost_usd + cost_usd, "last_used": last,
        "deviations": m.deviations + 1 if deviation == "major" else 0})


class SkillUses(Database):
    """The statistics part of :class:`~skills.store.SkillStore`."""

    async def count_retrieved(self, skill_ids: Sequence[str]) -> None:
        """Add one retrieval per id given, in one statement.

        An id given twice counts twice (two tasks retrieved it); unknown ids are ignored.
        """
        counts = Counter(skill_ids)
        if not counts:
            return
        async with self.engine.begin() as conn:
            await lock_library(conn)
            await conn.execute(
                update(SKILLS).where(SKILLS.c.skill_id.in_(list(counts)))
                .values(retrieved=SKILLS.c.retrieved + case(counts, value=SKILLS.c.skill_id,
                                                            else_=0),
                        updated_at=now(), revision=REVISION.next_value()))

    async def record_use(self, skill_id: str, *, succeeded: bool, duration_s: float,
                         cost_usd: float, at: datetime, deviation: Deviation, key: str,
                         alpha: float | None = None) -> tuple[Skill, bool]:
        """Count one use of a skill by the task ``key`` (``run_id/task_id``), once per key.

        A major deviation adds to the skill's consecutive count; any other outcome resets it.
        When the count reaches ``FLAG_AFTER_DEVIATIONS`` an active skill goes back to
        ``candidate`` for a person to review. ``alpha``, the use's alpha_match
        (:mod:`skills.utilisation`), is kept in the audit trail.

        Returns:
            The skill as stored, and whether this use flagged it for review. A key already
            recorded changes nothing and returns the skill as it is.

        Raises:
            SkillNotFound: no skill has this id.
            SkillUnreadable: the stored row is not a valid skill.
            ValueError: the key is empty, the deviation unknown, or a duration or cost is
                negative or not finite.
        """
        problem = _use_problem(key, deviation, duration_s, cost_usd)
        if problem:
            raise ValueError(f"use of skill {skill_id} not recorded: {problem}")
        async with self.engine.begin() as conn:
            await lock_library(conn)
            current = await read_locked(conn, skill_id)
            fresh = (await conn.execute(
                pg_insert(USES).values(key=key, skill_id=skill_id, at=utc(at),
                                       succeeded=succeeded, deviation=deviation)
                .on_conflict_do_nothing(index_elements=["key"]).returning(USES.c.key))).first()
            if fresh is None:
                return current, False
            metrics = _counted(current.metrics, succeeded=succeeded, duration_s=duration_s,
                               cost_usd=cost_usd, at=at, deviation=deviation)
            flagged = (current.status == "active"
                       and metrics.deviations >= FLAG_AFTER_DEVIATIONS)
            changed: dict[str, Any] = {"metrics": metrics}
            entries: list[Entry] = [(skill_id, "used", {
                "key": key, "succeeded": succeeded, "deviation": deviation,
                "duration_s": duration_s, "cost_usd": cost_usd,
                **({} if alpha is None else {"alpha": alpha})})]
            if flagged:
                note = f"flagged for review after {metrics.deviations} major deviations"
                changed.update(status="candidate", note=note)
                entries.append((skill_id, "flagged", {"from": "active", "to": "candidate",
                                                      "note": note}))
            stored = await write(conn, current.model_copy(update=changed), now())
            await record(conn, "skill-library", entries)
            return stored, flagged

    async def note_unused(self, skill_id: str, *, key: str, alpha: float,
                          succeeded: bool) -> bool:
        """Record that the task ``key`` was offered the skill but did not use it, once per key.

        Nothing is counted (the retrieval already was): the audit trail says the task's
        alpha_match and how it ended. Returns whether the note is new; an unknown skill is none.
        """
        async with self.engine.begin() as conn:
            await lock_library(conn)
            if not await existing(conn, [skill_id]):
                return False
            seen = (await conn.execute(
                select(EVENTS.c.seq).where(EVENTS.c.skill_id == skill_id,
                                           EVENTS.c.action == UNUSED,
                                           EVENTS.c.detail["key"].astext == key))).first()
            if seen is not None:
                return False
            await record(conn, "skill-library", [(skill_id, UNUSED, {
                "key": key, "alpha": alpha, "succeeded": succeeded})])
            return True
