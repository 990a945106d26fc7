"""The skill library's tables, how a skill becomes a row and back, and the status moves.

Kept apart from :mod:`skills.store` so the columns can be read at a glance. The
``pattern`` column holds the whole :class:`~workflows.contracts.patterns.SkillPattern` as
JSONB (its source of truth); ``name``, ``version`` and ``kind`` are copies of it for
filtering, and the metrics have a column each so updates such as
``retrieved = retrieved + 1`` need no read. Every write
takes a fresh ``revision`` from one sequence, so a process can ask for the rows changed since
the revision it last saw. ``skill_events`` is the audit trail, append-only in the database
itself (a trigger, created by the baseline revision of :mod:`database.migrations`,
refuses every UPDATE, DELETE and TRUNCATE); ``skill_uses`` holds one row per recorded use,
keyed by the task, so a use recorded twice counts once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import ValidationError
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    Identity,
    Index,
    Integer,
    Sequence,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from database.engine import DatabaseUnavailable
from workflows.common.validation import summary
from workflows.contracts.patterns import Skill, SkillStatus, name_problem

STATUSES: tuple[SkillStatus, ...] = get_args(SkillStatus)
MOVES: dict[str, tuple[SkillStatus, ...]] = {
    "candidate": ("active", "trial", "retired"),
    "trial": ("active", "retired"),
    "active": ("retired", "candidate"),
    "retired": ("candidate",),
}
"""The status changes allowed from each status (active → candidate: flagged for review;
retired → candidate: a person revives it)."""

REVISION = Sequence("skill_revision")
"""Every write to a skill row takes the next value of this sequence."""


class SkillNotFound(LookupError):
    """No skill has the id asked for; the message suggests close ids."""


class SkillExists(ValueError):
    """Skills to add are already in the library (or given twice); nothing was added.

    Attributes:
        skill_ids: Every conflicting id.
    """

    def __init__(self, message: str, skill_ids: list[str]) -> None:
        super().__init__(message)
        self.skill_ids = skill_ids


class SkillInvalid(ValueError):
    """Skills cannot be stored as they are; nothing was written.

    Attributes:
        problems: One line per problem, each naming the skill.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class SkillStatusError(ValueError):
    """A status change that is not allowed; the message gives the allowed ones."""


class SkillUnreadable(ValueError):
    """A stored row is not a valid skill; the message names it and says why."""


class SkillStoreUnavailable(DatabaseUnavailable):
    """The skill database cannot be reached or prepared; the message says which and why."""


def _text(*, primary_key: bool = False) -> Any:
    return Field(sa_column=Column(Text, primary_key=primary_key, nullable=False))


def _int(kind: type[Integer] = BigInteger) -> Any:
    return Field(sa_column=Column(kind, nullable=False))


def _float() -> Any:
    return Field(sa_column=Column(Double, nullable=False))


def _time(*, nullable: bool = False) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable))


def _json() -> Any:
    return Field(default_factory=dict[str, Any], sa_column=Column(JSONB, nullable=False))


class SkillRow(SQLModel, table=True):
    """One stored :class:`~workflows.contracts.patterns.Skill`: pattern as JSONB, metric columns."""

    __tablename__ = "skills"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (
        UniqueConstraint("name", "version", name="uq_skills_name_version"),
        Index("ix_skills_status", "status"),
        Index("ix_skills_revision", "revision"),
    )

    skill_id: str = _text(primary_key=True)
    name: str = _text()
    version: int = _int(Integer)
    kind: str = _text()
    status: str = _text()
    origin: str = _text()
    pattern: dict[str, Any] = _json()
    retrieved: int = _int()
    used: int = _int()
    succeeded: int = _int()
    total_duration_s: float = _float()
    total_cost_usd: float = _float()
    last_used: datetime | None = _time(nullable=True)
    evidence_successes: int = _int(Integer)
    evidence_failures: int = _int(Integer)
    deviations: int = _int(Integer)
    confidence: float = _float()
    share: float = _float()
    note: str = _text()
    created_at: datetime = _time()
    updated_at: datetime = _time()
    revision: int | None = Field(
        default=None, sa_column=Column(BigInteger, REVISION, nullable=False))


class SkillEventRow(SQLModel, table=True):
    """One entry of the audit trail: who did what to which skill, and when."""

    __tablename__ = "skill_events"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (Index("ix_skill_events_skill", "skill_id", "seq"),)

    seq: int | None = Field(
        default=None, sa_column=Column(BigInteger, Identity(), primary_key=True))
    skill_id: str = _text()
    at: datetime | None = Field(
        default=None,
        sa_column=Column(DateTime(timezone=True), nullable=False, server_default=func.now()))
    by: str = _text()
    action: str = _text()
    detail: dict[str, Any] = _json()


class SkillUseRow(SQLModel, table=True):
    """One recorded use of a skill, keyed by the task (``run_id/task_id``) that used it."""

    __tablename__ = "skill_uses"  # pyright: ignore[reportAssignmentType]

    key: str = _text(primary_key=True)
    skill_id: str = _text()
    at: datetime = _time()
    succeeded: bool = Field(sa_column=Column(Boolean, nullable=False))
    deviation: str = _text()


SKILLS = SQLModel.metadata.tables["skills"]
EVENTS = SQLModel.metadata.tables["skill_events"]
USES = SQLModel.metadata.tables["skill_uses"]
"""The SQLAlchemy ``Table`` objects behind the rows above, for Core statements."""


def utc(moment: datetime) -> datetime:
    """``moment`` with a time zone: a naive time is taken as UTC, never as local time."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def skill_problems(skill: Skill) -> list[str]:
    """Why ``skill`` cannot be stored as it is; empty if it can."""
    where = f"skill {skill.skill_id[:80]}"
    found = [f"{where}: {problem}" for problem in [name_problem(skill.pattern.name)] if problem]
    try:
        text = json.dumps(skill.model_dump(mode="json"), allow_nan=False)
    except ValueError:
        return [*found, f"{where}: holds a number that is not finite (NaN or infinity)"]
    if "\\u0000" in text or "\x00" in skill.skill_id:
        found.append(f"{where}: holds a NUL character, which PostgreSQL cannot store")
    return found


def skill_values(skill: Skill) -> dict[str, Any]:
    """The column values of ``skill`` (all but ``revision``; times as the skill has them)."""
    m = skill.metrics
    return {
        "skill_id": skill.skill_id, "name": skill.pattern.name,
        "version": skill.pattern.version, "kind": skill.pattern.kind, "status": skill.status,
        "origin": skill.origin, "pattern": skill.pattern.model_dump(mode="json"),
        "retrieved": m.retrieved, "used": m.used, "succeeded": m.succeeded,
        "total_duration_s": m.total_duration_s, "total_cost_usd": m.total_cost_usd,
        "last_used": m.last_used and utc(m.last_used),
        "evidence_successes": m.evidence_successes, "evidence_failures": m.evidence_failures,
        "deviations": m.deviations, "confidence": skill.confidence, "share": skill.share,
        "note": skill.note, "created_at": skill.created_at and utc(skill.created_at),
        "updated_at": skill.updated_at and utc(skill.updated_at),
    }


_METRICS = ("retrieved", "used", "succeeded", "total_duration_s", "total_cost_usd",
            "last_used", "evidence_successes", "evidence_failures", "deviations")


def read_skill(row: Mapping[Any, Any]) -> Skill:
    """The skill a ``skills`` row holds.

    Raises:
        SkillUnreadable: the row is not a valid skill, or its pattern is another skill's.
    """
    skill_id = row["skill_id"]
    try:
        skill = Skill.model_validate({
            "pattern": row["pattern"], "status": row["status"],
            "metrics": {name: row[name] for name in _METRICS},
            "confidence": row["confidence"], "share": row["share"], "origin": row["origin"],
            "note": row["note"], "created_at": row["created_at"],
            "updated_at": row["updated_at"]})
    except ValidationError as err:
        raise SkillUnreadable(f"skill {skill_id} is unreadable: {summary(err)}") from None
    if skill.skill_id != skill_id:
        raise SkillUnreadable(f"skill {skill_id} is unreadable: its pattern is "
                              f"{skill.skill_id}")
    return skill


def move_problem(skill: Skill, status: str, share: float | None) -> str | None:
    """Why ``skill`` may not move to ``status`` (with ``share`` for a trial), or ``None``."""
    if status not in STATUSES:
        return f"unknown status {status!r}: use one of {', '.join(STATUSES)}"
    allowed = MOVES[skill.status]
    if status not in allowed:
        return (f"skill {skill.skill_id} is {skill.status}; it can become "
                f"{' or '.join(allowed)}, not {status}")
    if status == "trial":
        given = skill.share if share is None else share
        if not 0 < given <= 1:
            return (f"a trial of {skill.skill_id} needs a share of matching tasks above 0 "
                    f"and at most 1 (e.g. 0.1), not {given:g}")
    return None


def default_note(current: str, status: str, by: str) -> str:
    """What a status change says when no note is given."""
    if status == "candidate":
        return (f"revived by {by}" if current == "retired" else
                f"sent back to review by {by}")
    verb = {"active": "approved", "trial": "approved for trial", "retired": "retired"}[status]
    return f"{verb} by {by}"


def move_action(current: str, status: str) -> str:
    """The audit action of a status change."""
    if status == "candidate":
        return "revived" if current == "retired" else "flagged"
    if status == "active":
        return "promoted" if current == "trial" else "approved"
    return "trial" if status == "trial" else "retired"
