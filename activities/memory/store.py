"""Reflection memory in PostgreSQL: episodes, semantic rules, procedural templates, a ledger.

Memory lives in the same database as the events. Every write is idempotent or serialised:
episodes are inserted with ``ON CONFLICT DO NOTHING``; rule and template writes for one task
type take an advisory lock, so two workers learning from the same kind of task cannot lose
each other's counts; ledger appends take one lock and chain each entry to the last.

A rule carries the checksum of its content as Assay wrote it. A rule edited straight in the
database (or unreadable) is never applied: readers skip it and say why, and only a person
re-saving it (``assay memory edit``/``enable``/``disable``) puts it back in use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast, get_args

from pydantic import Field, ValidationError
from sqlalchemy import Table, bindparam, delete, func, or_, select, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlmodel import SQLModel

from activities.common.database import Database
from activities.common.limits import serialize
from activities.memory.schema import (
    EPISODES,
    GENESIS,
    LEDGER,
    LEDGER_GUARD_DDL,
    MEMORY_TABLES,
    RULES,
    TEMPLATES,
    edited_rule,
    episode_row,
    job_checksum,
    ledger_digest,
    problems,
    read_template,
    rule_checksum,
    rule_row,
    summary,
    template_id,
    template_row,
)
from workflows.contracts.execution import Model
from workflows.contracts.memory import (
    CACHE_AFTER,
    Episode,
    MemoryRule,
    ProceduralTemplate,
    RuleStatus,
)
from workflows.contracts.plan import JobSpec, Scalar

__all__ = [
    "LedgerBroken", "LedgerEntry", "MemoryStore", "MemoryStoreUnavailable", "RuleNotFound",
    "RuleTampered", "RuleUnreadable", "job_checksum", "rule_checksum", "template_id",
]

_DDL_LOCK = (0x41535344, 1)  # the schema-creation namespace of the event store, key 1
_TYPE_LOCK_CLASS = 0x4153534D  # rule and template writes, per task type
_LEDGER_LOCK = (0x4153534C, 0)  # ledger appends
_ID_CHUNK = 5000
LEDGER_PAGE = 1000
LedgerKind = Literal["note", "patch", "outcome", "rule", "template"]


class MemoryStoreUnavailable(RuntimeError):
    """The memory database cannot be reached or prepared; the message says which and why."""


class RuleUnreadable(ValueError):
    """A stored rule cannot be used; the message names the rule and says why."""


class RuleTampered(RuleUnreadable):
    """A stored rule is readable but no longer matches the checksum Assay gave it."""


class RuleNotFound(LookupError):
    """No rule has the id asked for."""


class LedgerBroken(ValueError):
    """The memory ledger's chain no longer holds; the message names the entry's ``seq``."""


class LedgerEntry(Model):
    """One entry to append to the memory ledger; ``entry_id`` makes appends idempotent."""

    entry_id: str = Field(min_length=1)
    kind: LedgerKind
    run_id: str = ""
    task_id: str = ""
    body: dict[str, Any] = Field(default_factory=dict[str, Any])


def read_rule(row: Mapping[Any, Any], *, allow_tampered: bool = False) -> MemoryRule:
    """The rule a ``memory_rules`` row holds, checked against its checksum.

    Raises:
        RuleUnreadable: the body is not a valid rule.
        RuleTampered: the body no longer matches its checksum (unless ``allow_tampered``).
    """
    rule_id = row["rule_id"]
    try:
        rule = MemoryRule.model_validate(row["body"])
    except ValidationError as err:
        raise RuleUnreadable(f"rule {rule_id} is unreadable: {summary(err)}") from None
    expected = rule_checksum(rule)
    if not allow_tampered and (rule.rule_id != rule_id
                               or not rule.sha256 == row["sha256"] == expected):
        raise RuleTampered(
            f"rule {rule_id} was changed outside Assay (checksum mismatch) and is not applied;"
            f" re-save it with `assay memory edit {rule_id}` or `assay memory enable {rule_id}`"
            f" to apply it as it now stands (see it with `assay memory show {rule_id}`)")
    return rule


def _chunks(items: Sequence[str], size: int = _ID_CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


async def _lock(conn: AsyncConnection, lock_class: int, key: int) -> None:
    await conn.execute(text("SELECT pg_advisory_xact_lock(:c, :k)"), {"c": lock_class, "k": key})


async def _lock_type(conn: AsyncConnection, task_type: str) -> None:
    """Serialise rule and template writes for one task type until the transaction ends."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:c, hashtext(:t))"),
                       {"c": _TYPE_LOCK_CLASS, "t": task_type})


async def _upsert(conn: AsyncConnection, table: Table, key: str,
                  values: dict[str, Any]) -> None:
    stmt = pg_insert(table).values(values)
    await conn.execute(stmt.on_conflict_do_update(
        index_elements=[key], set_={name: stmt.excluded[name] for name in values if name != key}))


async def _write_rule(conn: AsyncConnection, rule: MemoryRule) -> MemoryRule:
    """Upsert a rule by ``rule_id`` with a fresh checksum; returns the rule as stored."""
    stored, values = rule_row(rule)
    await _upsert(conn, RULES, "rule_id", values)
    return stored


async def _write_template(conn: AsyncConnection, template: ProceduralTemplate) -> None:
    await _upsert(conn, TEMPLATES, "template_id", template_row(template))


def _check_link(row: Mapping[Any, Any], prev: str) -> None:
    where = f"memory ledger broken at seq {row['seq']} (entry {row['entry_id']})"
    if row["prev"] != prev:
        raise LedgerBroken(f"{where}: it does not carry the checksum of the entry before it "
                           "(an entry was changed, removed or reordered)")
    digest = ledger_digest(row["entry_id"], row["kind"], row["run_id"], row["task_id"],
                           row["body"], row["prev"])
    if digest != row["sha256"]:
        raise LedgerBroken(f"{where}: its content no longer matches its checksum (it was "
                           "changed after it was written)")


class MemoryStore(Database):
    """PostgreSQL-backed reflection memory; the worker builds one from settings.

    Args:
        database_url: A SQLAlchemy asyncpg URL, e.g.
            ``postgresql+asyncpg://postgres@/assay?host=/path/to/socketdir``.
    """

    async def open(self) -> None:
        """Connect and create the memory tables, indexes and ledger guard if missing.

        Safe when several workers start at once: creation runs under an advisory lock.

        Raises:
            MemoryStoreUnavailable: the server or database cannot be reached.
        """
        if self._engine is None:
            self._engine = create_async_engine(self._url, json_serializer=serialize)
        try:
            async with self._engine.begin() as conn:
                await _lock(conn, *_DDL_LOCK)
                await conn.run_sync(
                    lambda sync: SQLModel.metadata.create_all(sync, tables=MEMORY_TABLES))
                for statement in LEDGER_GUARD_DDL:
                    await conn.exec_driver_sql(statement)
        except (OSError, DBAPIError) as err:
            raise MemoryStoreUnavailable(self.unreachable("memory store", err)) from err

    # --- episodes ------------------------------------------------------------------------

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

    # --- semantic rules ------------------------------------------------------------------

    async def rules(self, task_type: str | None = None, *,
                    statuses: tuple[str, ...] | None = None,
                    ) -> tuple[list[MemoryRule], list[str]]:
        """Usable rules, most confident first, and a warning per rule that cannot be used.

        A rule whose body is invalid, or no longer matches its checksum, is left out and
        explained in the warnings.
        """
        stmt = select(RULES)
        if task_type is not None:
            stmt = stmt.where(RULES.c.task_type == task_type)
        if statuses is not None:
            stmt = stmt.where(RULES.c.status.in_(statuses))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt.order_by(RULES.c.rule_id))).mappings().all()
        found: list[MemoryRule] = []
        warnings: list[str] = []
        for row in rows:
            try:
                found.append(read_rule(row))
            except RuleUnreadable as err:
                warnings.append(str(err))
        found.sort(key=lambda rule: (-rule.confidence, rule.rule_id))
        return found, warnings

    async def rule(self, rule_id: str, *, allow_tampered: bool = False) -> MemoryRule | None:
        """One rule, or ``None`` if no rule has this id.

        Args:
            rule_id: The rule's id.
            allow_tampered: Return a rule changed outside Assay as it now stands (to show
                it to a person) instead of raising :class:`RuleTampered`.

        Raises:
            RuleUnreadable: the stored rule is invalid or was changed outside Assay.
        """
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(RULES).where(RULES.c.rule_id == rule_id))
                   ).mappings().first()
        return None if row is None else read_rule(row, allow_tampered=allow_tampered)

    async def save_rule(self, rule: MemoryRule) -> MemoryRule:
        """Insert or replace a rule, checksummed; returns the rule as stored.

        If another rule already holds the rule's (task type, root cause), that rule is the
        one replaced, keeping its id and creation time.
        """
        key = (RULES.c.task_type == rule.task_type) & (RULES.c.root_cause == rule.root_cause)
        async with self.engine.begin() as conn:
            await _lock_type(conn, rule.task_type)
            rows = (await conn.execute(
                select(RULES.c.rule_id, RULES.c.created_at, key.label("holds_key"))
                .where(or_(RULES.c.rule_id == rule.rule_id, key)))).mappings().all()
            held = [r for r in rows if r["holds_key"]] or list(rows)
            target = held[0]["rule_id"] if held else rule.rule_id
            created = rule.created_at or (held[0]["created_at"] if held else None)
            return await _write_rule(conn, rule.model_copy(update={
                "rule_id": target, "created_at": created or datetime.now(UTC)}))

    async def set_rule_status(self, rule_id: str, status: str, by: str) -> MemoryRule:
        """Enable, disable or demote a rule in the name of ``by``.

        Raises:
            ValueError: ``status`` is not a rule status.
            RuleNotFound: no rule has this id.
            RuleUnreadable: the stored rule is not a valid rule.
        """
        allowed: tuple[RuleStatus, ...] = get_args(RuleStatus)
        if status not in allowed:
            raise ValueError(f"unknown rule status {status!r}: use one of {', '.join(allowed)}")
        return await self.update_rule(
            rule_id, lambda rule: rule.model_copy(update={"status": status, "updated_by": by}))

    async def edit_rule(self, rule_id: str, *, parameters: dict[str, Scalar] | None = None,
                        limits: dict[str, str] | None = None, observation: str | None = None,
                        by: str) -> MemoryRule:
        """Change a rule's recommended values, their limits or its observation.

        Only ``args.<name>`` and ``resources.memory_mb|timeout_s|cpus`` may be edited, to
        values a job spec accepts; nothing is written unless every change is valid.

        Raises:
            ValueError: a field, value or limit is refused (the message says which and why).
            RuleNotFound: no rule has this id.
            RuleUnreadable: the stored rule is not a valid rule.
        """
        refused = problems(parameters or {}, limits or {}, observation)
        if refused:
            raise ValueError(f"rule {rule_id} not changed: " + "; ".join(refused))
        return await self.update_rule(
            rule_id, lambda rule: edited_rule(rule, parameters or {}, limits or {},
                                              observation, by))

    async def update_rule(self, rule_id: str,
                           change: Callable[[MemoryRule], MemoryRule]) -> MemoryRule:
        """Apply ``change`` to a stored rule under its task type's lock and store the result.

        A rule changed outside Assay is accepted here: the person re-saving it adopts it.
        """
        missing = RuleNotFound(f"no rule {rule_id!r}; `assay memory rules --all` lists them")
        async with self.engine.begin() as conn:
            kind = (await conn.execute(select(RULES.c.task_type)
                                       .where(RULES.c.rule_id == rule_id))).scalar_one_or_none()
            if kind is None:
                raise missing
            await _lock_type(conn, kind)
            row = (await conn.execute(select(RULES).where(RULES.c.rule_id == rule_id)
                                      .with_for_update())).mappings().first()
            if row is None:
                raise missing
            rule = read_rule(row, allow_tampered=True).model_copy(update={"rule_id": rule_id})
            return await _write_rule(conn, change(rule))

    # --- procedural templates ------------------------------------------------------------

    async def note_clean_success(self, task_type: str, action: str, job: JobSpec,
                                 input_names: Sequence[str], now: datetime,
                                 ) -> ProceduralTemplate:
        """Count one clean success of a job spec; cached once it has ``CACHE_AFTER`` of them."""
        digest = job_checksum(job)
        tid = template_id(task_type, digest)
        async with self.engine.begin() as conn:
            await _lock_type(conn, task_type)
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
                "clean_successes": count, "cached": current.cached or count >= CACHE_AFTER})
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

    async def note_template_use(self, template_id: str, *, success: bool, now: datetime,
                                ) -> ProceduralTemplate | None:
        """Count one use of a template (and its success); ``None`` if it is unknown."""
        by_id = TEMPLATES.c.template_id == template_id
        async with self.engine.begin() as conn:
            kind = (await conn.execute(select(TEMPLATES.c.task_type).where(by_id))
                    ).scalar_one_or_none()
            if kind is None:
                return None
            await _lock_type(conn, kind)
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

    # --- ledger --------------------------------------------------------------------------

    async def append_ledger(self, entries: Sequence[LedgerEntry]) -> int:
        """Append the entries not yet in the ledger, chained in order; returns how many."""
        fresh = list({e.entry_id: e for e in reversed(entries)}.values())[::-1]
        if not fresh:
            return 0
        async with self.engine.begin() as conn:
            await _lock(conn, *_LEDGER_LOCK)
            known: set[str] = set()
            for ids in _chunks([e.entry_id for e in fresh]):
                known.update((await conn.execute(
                    select(LEDGER.c.entry_id).where(LEDGER.c.entry_id.in_(ids)))).scalars())
            fresh = [e for e in fresh if e.entry_id not in known]
            if not fresh:
                return 0
            prev = (await conn.execute(select(LEDGER.c.sha256).order_by(LEDGER.c.seq.desc())
                                       .limit(1))).scalar_one_or_none() or GENESIS
            # Hash the bodies as JSONB gives them back, so verification recomputes the same.
            stored = await conn.execute(
                select(bindparam("bodies", [e.body for e in fresh], type_=JSONB)))
            bodies = cast("list[dict[str, Any]]", stored.scalar_one())
            rows: list[dict[str, Any]] = []
            for entry, body in zip(fresh, bodies, strict=True):
                digest = ledger_digest(entry.entry_id, entry.kind, entry.run_id, entry.task_id,
                                       body, prev)
                rows.append({**entry.model_dump(exclude={"body"}), "body": body, "prev": prev,
                             "sha256": digest})
                prev = digest
            await conn.execute(LEDGER.insert(), rows)
            return len(rows)

    async def verify_ledger(self) -> int:
        """Check the whole chain; returns the number of entries.

        Raises:
            LedgerBroken: an entry's ``prev`` or ``sha256`` no longer matches the chain.
        """
        prev, count, after = GENESIS, 0, 0
        async with self.engine.connect() as conn:
            while True:
                rows = (await conn.execute(select(LEDGER).where(LEDGER.c.seq > after)
                                           .order_by(LEDGER.c.seq).limit(LEDGER_PAGE))
                        ).mappings().all()
                for row in rows:
                    _check_link(row, prev)
                    prev = row["sha256"]
                count += len(rows)
                if len(rows) < LEDGER_PAGE:
                    return count
                after = rows[-1]["seq"]

    async def ledger(self, run_id: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """The last ``limit`` ledger entries (of one run, if given), oldest first."""
        stmt = select(LEDGER).order_by(LEDGER.c.seq.desc()).limit(max(limit, 0))
        if run_id is not None:
            stmt = stmt.where(LEDGER.c.run_id == run_id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return [dict(row) for row in reversed(rows)]
