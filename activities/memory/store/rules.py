"""Semantic rules in PostgreSQL, each checksummed as Assay wrote it.

A rule edited straight in the database (or unreadable) is never applied: readers skip it and
say why, and only a person re-saving it (``assay memory edit``/``enable``/``disable``) puts it
back in use. Writes for one task type are serialised (see :mod:`.writes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import ValidationError
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.memory.schema import (
    RULES,
    edited_rule,
    problems,
    rule_checksum,
    rule_row,
)
from activities.memory.store.writes import lock_type, upsert
from database.engine import Database
from workflows.common.validation import summary
from workflows.contracts.memory import MemoryRule, RuleStatus
from workflows.contracts.plan import Scalar


class RuleUnreadable(ValueError):
    """A stored rule cannot be used; the message names the rule and says why."""


class RuleTampered(RuleUnreadable):
    """A stored rule is readable but no longer matches the checksum Assay gave it."""


class RuleNotFound(LookupError):
    """No rule has the id asked for."""


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


async def _write_rule(conn: AsyncConnection, rule: MemoryRule) -> MemoryRule:
    """Upsert a rule by ``rule_id`` with a fresh checksum; returns the rule as stored."""
    stored, values = rule_row(rule)
    await upsert(conn, RULES, "rule_id", values)
    return stored


class RuleStore(Database):
    """The semantic rules part of :class:`~activities.memory.store.MemoryStore`."""

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
            await lock_type(conn, rule.task_type)
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
            await lock_type(conn, kind)
            row = (await conn.execute(select(RULES).where(RULES.c.rule_id == rule_id)
                                      .with_for_update())).mappings().first()
            if row is None:
                raise missing
            rule = read_rule(row, allow_tampered=True).model_copy(update={"rule_id": rule_id})
            return await _write_rule(conn, change(rule))
