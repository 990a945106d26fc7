"""The skill library in PostgreSQL: patterns, their statistics and status, and an audit trail.

Every process matching skills keeps an in-memory index of the library; the store is the one
truth they share. Every write runs under one advisory lock and takes the next ``revision``, so
revisions grow in commit order and :meth:`SkillStore.changes_since` never skips a row. Several
workers recording uses at once cannot lose a count, a use recorded twice (a retried activity)
counts once, and every change is written to ``skill_events`` in the same transaction.

A row that is no longer a valid skill (edited straight in the database) is never used: reads
of many rows leave it out and say why; reading it by id raises :class:`SkillUnreadable`.
"""

from __future__ import annotations

import builtins
import difflib
import logging
import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import Field
from sqlalchemy import case, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlmodel import SQLModel

from activities.common.database import Database
from activities.common.limits import serialize
from skills.schema import (
    EVENTS,
    EVENTS_GUARD_DDL,
    REVISION,
    SKILL_TABLES,
    SKILLS,
    STATUSES,
    USES,
    SkillExists,
    SkillInvalid,
    SkillNotFound,
    SkillStatusError,
    SkillUnreadable,
    default_note,
    move_action,
    move_problem,
    read_skill,
    skill_problems,
    skill_values,
    utc,
)
from workflows.contracts.execution import Model
from workflows.library.patterns import FLAG_AFTER_DEVIATIONS, Deviation, Skill

__all__ = [
    "SkillEvent", "SkillExists", "SkillInvalid", "SkillNotFound", "SkillStatusError",
    "SkillStore", "SkillStoreUnavailable", "SkillUnreadable",
]

log = logging.getLogger(__name__)

_DDL_LOCK = (0x41535344, 2)  # the schema-creation namespace of the event store, key 2
_WRITE_LOCK = (0x41535353, 0)  # every write to the skill library
_DEVIATIONS: tuple[str, ...] = get_args(Deviation)
Entry = tuple[str, str, dict[str, Any]]
"""An audit entry to write: skill id, action, detail."""


class SkillStoreUnavailable(RuntimeError):
    """The skill database cannot be reached or prepared; the message says which and why."""


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


async def _lock(conn: AsyncConnection, lock_class: int, key: int) -> None:
    await conn.execute(text("SELECT pg_advisory_xact_lock(:c, :k)"), {"c": lock_class, "k": key})


async def _record(conn: AsyncConnection, by: str, entries: Sequence[Entry]) -> None:
    if entries:
        await conn.execute(EVENTS.insert(), [
            {"skill_id": skill_id, "by": by, "action": action, "detail": detail}
            for skill_id, action, detail in entries])


async def _existing(conn: AsyncConnection, skill_ids: Collection[str]) -> set[str]:
    if not skill_ids:
        return set()
    stmt = select(SKILLS.c.skill_id).where(SKILLS.c.skill_id.in_(builtins.list(skill_ids)))
    return set((await conn.execute(stmt)).scalars())


async def _missing(conn: AsyncConnection, skill_id: str) -> SkillNotFound:
    """The error for an unknown id, suggesting the closest ids the library has."""
    known = builtins.list((await conn.execute(select(SKILLS.c.skill_id))).scalars())
    close = difflib.get_close_matches(skill_id, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return SkillNotFound(f"no skill {skill_id!r}{hint} (`assay skills list --all` lists them)")


async def _read(conn: AsyncConnection, skill_id: str) -> Skill:
    """One skill, its row locked until the transaction ends."""
    row = (await conn.execute(select(SKILLS).where(SKILLS.c.skill_id == skill_id)
                              .with_for_update())).mappings().first()
    if row is None:
        raise await _missing(conn, skill_id)
    return read_skill(row)


async def _write(conn: AsyncConnection, skill: Skill, now: datetime) -> Skill:
    """Replace the row of an existing skill; returns the skill as stored."""
    values = skill_values(skill)
    values.update(updated_at=now, revision=REVISION.next_value())
    if values["created_at"] is None:
        del values["created_at"]
    created = (await conn.execute(update(SKILLS).where(SKILLS.c.skill_id == skill.skill_id)
                                  .values(values).returning(SKILLS.c.created_at))).scalar_one()
    return skill.model_copy(update={"created_at": created, "updated_at": now})


def _refuse_invalid(skills: Sequence[Skill]) -> None:
    problems = [problem for skill in skills for problem in skill_problems(skill)]
    if problems:
        raise SkillInvalid(problems)


def _now() -> datetime:
    return datetime.now(UTC)


def _parsed(rows: Sequence[Mapping[Any, Any]]) -> tuple[builtins.list[Skill], builtins.list[str]]:
    skills: builtins.list[Skill] = []
    problems: builtins.list[str] = []
    for row in rows:
        try:
            skills.append(read_skill(row))
        except SkillUnreadable as err:
            problems.append(str(err))
    return skills, problems


class SkillStore(Database):
    """PostgreSQL-backed skill library; workers and the CLI build one from settings.

    Args:
        database_url: A SQLAlchemy asyncpg URL, e.g.
            ``postgresql+asyncpg://postgres@/assay?host=/path/to/socketdir``.
    """

    async def open(self) -> None:
        """Connect and create the skill tables, their sequence and the audit guard if missing.

        Safe when several workers start at once: creation runs under an advisory lock.

        Raises:
            SkillStoreUnavailable: the server or database cannot be reached.
        """
        if self._engine is None:
            self._engine = create_async_engine(self._url, json_serializer=serialize)
        try:
            async with self._engine.begin() as conn:
                await _lock(conn, *_DDL_LOCK)
                await conn.run_sync(
                    lambda sync: SQLModel.metadata.create_all(sync, tables=SKILL_TABLES))
                for statement in EVENTS_GUARD_DDL:
                    await conn.exec_driver_sql(statement)
        except (OSError, DBAPIError) as err:
            raise SkillStoreUnavailable(self.unreachable("skill library", err)) from err

    # --- adding --------------------------------------------------------------------------

    async def add(self, skill: Skill, *, by: str, action: str = "created") -> Skill:
        """Add one skill in the name of ``by``; returns it as stored.

        Raises:
            SkillExists: a skill with this id (name and version) is already stored.
            SkillInvalid: the skill cannot be stored (bad name, NUL character, NaN).
        """
        return (await self.add_many([skill], by=by, action=action))[0]

    async def add_many(self, skills: Sequence[Skill], *, by: str, action: str = "created",
                       detail: dict[str, Any] | None = None) -> builtins.list[Skill]:
        """Add skills in one transaction: all of them, or none if any id is taken.

        Raises:
            SkillExists: ids already stored or given twice; every one is named.
            SkillInvalid: skills that cannot be stored; every problem is named.
        """
        _refuse_invalid(skills)
        counts = Counter(skill.skill_id for skill in skills)
        twice = sorted(skill_id for skill_id, n in counts.items() if n > 1)
        async with self.engine.begin() as conn:
            await _lock(conn, *_WRITE_LOCK)
            taken = sorted(await _existing(conn, counts))
            if taken or twice:
                parts = ([f"already in the library: {', '.join(taken)}"] if taken else []) + (
                    [f"given twice: {', '.join(twice)}"] if twice else [])
                raise SkillExists(f"no skills added; {'; '.join(parts)}",
                                  sorted({*taken, *twice}))
            return await self._insert(conn, skills, by=by, action=action, detail=detail)

    async def seed(self, skills: Sequence[Skill], *, by: str) -> builtins.list[str]:
        """Add the skills whose name has no row yet (built-ins on first start).

        Idempotent and safe when several workers seed at once; a name a person retired
        stays retired. Returns the ids added.

        Raises:
            SkillInvalid: skills that cannot be stored; nothing is added.
        """
        _refuse_invalid(skills)
        async with self.engine.begin() as conn:
            await _lock(conn, *_WRITE_LOCK)
            names = {skill.pattern.name for skill in skills}
            known = set((await conn.execute(select(SKILLS.c.name).distinct()
                                            .where(SKILLS.c.name.in_(names)))).scalars())
            fresh = {s.skill_id: s for s in skills if s.pattern.name not in known}
            added = await self._insert(conn, builtins.list(fresh.values()), by=by,
                                       action="seeded")
            return [skill.skill_id for skill in added]

    async def _insert(self, conn: AsyncConnection, skills: Sequence[Skill], *, by: str,
                      action: str, detail: dict[str, Any] | None = None,
                      ) -> builtins.list[Skill]:
        if not skills:
            return []
        now = _now()
        stored = [s.model_copy(update={"created_at": utc(s.created_at or now),
                                       "updated_at": now}) for s in skills]
        await conn.execute(SKILLS.insert(), [skill_values(s) for s in stored])
        await _record(conn, by, [(s.skill_id, action,
                                  {"status": s.status, "origin": s.origin, **(detail or {})})
                                 for s in stored])
        return stored

    # --- reading -------------------------------------------------------------------------

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
                raise await _missing(conn, skill_id)
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
            if not await _existing(conn, [skill_id]):
                raise await _missing(conn, skill_id)
            rows = (await conn.execute(select(EVENTS).where(EVENTS.c.skill_id == skill_id)
                                       .order_by(EVENTS.c.seq))).mappings().all()
        return [SkillEvent.model_validate(dict(row)) for row in rows]

    # --- changing ------------------------------------------------------------------------

    async def save(self, skill: Skill, *, by: str, action: str,
                   detail: dict[str, Any] | None = None) -> Skill:
        """Replace everything stored for an existing skill and record ``action``.

        Raises:
            SkillNotFound: no skill has this id.
            SkillInvalid: the skill cannot be stored.
        """
        return (await self.save_many([skill], by=by, action=action, detail=detail))[0]

    async def save_many(self, skills: Sequence[Skill], *, by: str, action: str,
                        detail: dict[str, Any] | None = None) -> builtins.list[Skill]:
        """Replace several existing skills in one transaction (a merge: survivor and absorbed).

        Raises:
            SkillNotFound: one of them is not stored; nothing is written.
            SkillInvalid: one cannot be stored, or an id is given twice.
        """
        _refuse_invalid(skills)
        twice = sorted(i for i, n in Counter(s.skill_id for s in skills).items() if n > 1)
        if twice:
            raise SkillInvalid([f"skill {skill_id} is given twice" for skill_id in twice])
        async with self.engine.begin() as conn:
            await _lock(conn, *_WRITE_LOCK)
            known = await _existing(conn, [s.skill_id for s in skills])
            for skill in skills:
                if skill.skill_id not in known:
                    raise await _missing(conn, skill.skill_id)
            now = _now()
            stored = [await _write(conn, skill, now) for skill in skills]
            await _record(conn, by, [(s.skill_id, action, dict(detail or {})) for s in stored])
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
            await _lock(conn, *_WRITE_LOCK)
            current = await _read(conn, skill_id)
            problem = move_problem(current, status, share)
            if problem:
                raise SkillStatusError(problem)
            now = _now()
            replaced = await self._replace_active(conn, current, now) if status == "active" \
                else []
            update_: dict[str, Any] = {
                "status": status, "note": note or default_note(current.status, status, by),
                "share": (current.share if share is None else share) if status == "trial"
                else 0.0}
            if status in ("active", "trial"):
                update_["metrics"] = current.metrics.model_copy(update={"deviations": 0})
            stored = await _write(conn, current.model_copy(update=update_), now)
            detail: dict[str, Any] = {"from": current.status, "to": status, "note": stored.note}
            if status == "trial":
                detail["share"] = stored.share
            await _record(conn, by, [
                (old, "retired", {"from": "active", "to": "retired", "replaced_by": skill_id})
                for old in replaced] + [(skill_id, move_action(current.status, status), detail)])
            return stored

    async def _replace_active(self, conn: AsyncConnection, approved: Skill, now: datetime,
                              ) -> builtins.list[str]:
        """Retire the other active versions of ``approved``'s family; returns their ids."""
        stmt = (update(SKILLS)
                .where(SKILLS.c.name == approved.pattern.name, SKILLS.c.status == "active",
                       SKILLS.c.skill_id != approved.skill_id)
                .values(status="retired", note=f"replaced by {approved.skill_id}", share=0.0,
                        updated_at=now, revision=REVISION.next_value())
                .returning(SKILLS.c.skill_id))
        return sorted((await conn.execute(stmt)).scalars())

    # --- statistics ----------------------------------------------------------------------

    async def count_retrieved(self, skill_ids: Sequence[str]) -> None:
        """Add one retrieval per id given, in one statement.

        An id given twice counts twice (two tasks retrieved it); unknown ids are ignored.
        """
        counts = Counter(skill_ids)
        if not counts:
            return
        async with self.engine.begin() as conn:
            await _lock(conn, *_WRITE_LOCK)
            await conn.execute(
                update(SKILLS).where(SKILLS.c.skill_id.in_(builtins.list(counts)))
                .values(retrieved=SKILLS.c.retrieved + case(counts, value=SKILLS.c.skill_id,
                                                            else_=0),
                        updated_at=_now(), revision=REVISION.next_value()))

    async def record_use(self, skill_id: str, *, succeeded: bool, duration_s: float,
                         cost_usd: float, at: datetime, deviation: Deviation, key: str,
                         ) -> tuple[Skill, bool]:
        """Count one use of a skill by the task ``key`` (``run_id/task_id``), once per key.

        A major deviation adds to the skill's consecutive count; any other outcome resets it.
        When the count reaches ``FLAG_AFTER_DEVIATIONS`` an active skill goes back to
        ``candidate`` for a person to review.

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
            await _lock(conn, *_WRITE_LOCK)
            current = await _read(conn, skill_id)
            fresh = (await conn.execute(
                pg_insert(USES).values(key=key, skill_id=skill_id, at=utc(at),
                                       succeeded=succeeded, deviation=deviation)
                .on_conflict_do_nothing(index_elements=["key"]).returning(USES.c.key))).first()
            if fresh is None:
                return current, False
            m = current.metrics
            last = utc(at) if m.last_used is None else max(utc(m.last_used), utc(at))
            metrics = m.model_copy(update={
                "used": m.used + 1, "succeeded": m.succeeded + int(succeeded),
                "total_duration_s": m.total_duration_s + duration_s,
                "total_cost_usd": m.total_cost_usd + cost_usd, "last_used": last,
                "deviations": m.deviations + 1 if deviation == "major" else 0})
            flagged = (current.status == "active"
                       and metrics.deviations >= FLAG_AFTER_DEVIATIONS)
            changed: dict[str, Any] = {"metrics": metrics}
            entries: builtins.list[Entry] = [(skill_id, "used", {
                "key": key, "succeeded": succeeded, "deviation": deviation,
                "duration_s": duration_s, "cost_usd": cost_usd})]
            if flagged:
                note = f"flagged for review after {metrics.deviations} major deviations"
                changed.update(status="candidate", note=note)
                entries.append((skill_id, "flagged", {"from": "active", "to": "candidate",
                                                      "note": note}))
            stored = await _write(conn, current.model_copy(update=changed), _now())
            await _record(conn, "skill-library", entries)
            return stored, flagged


def _use_problem(key: str, deviation: str, duration_s: float, cost_usd: float) -> str | None:
    if not key.strip():
        return "the key (run_id/task_id) is empty"
    if deviation not in _DEVIATIONS:
        return f"unknown deviation {deviation!r}: use {', '.join(_DEVIATIONS)}"
    for name, value in (("duration_s", duration_s), ("cost_usd", cost_usd)):
        if not math.isfinite(value) or value < 0:
            return f"{name} must be a finite number of at least 0, not {value!r}"
    return None
