"""The memory tables, and what a record must be to be stored: checksums and edit checks.

Kept apart from :mod:`activities.memory.store` so the columns and indexes can be read at a
glance. Rules and templates keep the whole record as JSONB (the source of truth); their other
columns are copies for filtering, rewritten from the record on every write. The ledger is
append-only in the database itself: a trigger (created by the baseline revision of
:mod:`database.migrations`) refuses every UPDATE, DELETE and TRUNCATE.

A person may edit only the fields a patch may change (``args.<name>``, three resources), to
values a job spec accepts; :func:`problems` and :func:`edited_rule` say what is refused.
"""

from __future__ import annotations

import json
import re
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
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from activities.common.chain import sha256_hex
from database.limits import fit_json
from workflows.common.validation import summary
from workflows.contracts.memory import (
    Episode,
    Limit,
    MemoryRule,
    ProceduralTemplate,
    Recommendation,
)
from workflows.contracts.plan import JobSpec, Resources, Scalar


def _text(*, primary_key: bool = False, unique: bool = False) -> Any:
    return Field(sa_column=Column(Text, primary_key=primary_key, unique=unique,
                                  nullable=False))


def _json(default: Any) -> Any:
    return Field(default_factory=default, sa_column=Column(JSONB, nullable=False))


def _legacy() -> Any:
    """The task type a row had before types were kinds (revision 0004); empty after."""
    return Field(default="", sa_column=Column(Text, nullable=False, server_default=""))


def _time(*, nullable: bool = False) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable))


class MemoryEpisodeRow(SQLModel, table=True):
    """One stored :class:`~workflows.contracts.memory.Episode`, a column per field."""

    __tablename__ = "memory_episodes"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (
        Index("ix_memory_episodes_type_time", "task_type", "recorded_at"),
        Index("ix_memory_episodes_type_cause", "task_type", "root_cause"),
    )

    episode_id: str = _text(primary_key=True)
    recorded_at: datetime = _time()
    run_id: str = _text()
    task_id: str = _text()
    task_type: str = _text()
    legacy_type: str = _legacy()
    phase: str = _text()
    attempt: int = Field(sa_column=Column(Integer, nullable=False))
    root_cause: str = _text()
    patch_id: str = _text()
    patch_source: str = _text()
    changes: list[dict[str, Any]] = _json(list[dict[str, Any]])
    outcome: str = _text()
    fix: dict[str, Any] = _json(dict[str, Any])
    environment: str = _text()
    job_sha256: str = _text()
    metrics: dict[str, Any] = _json(dict[str, Any])
    duration_s: float = Field(sa_column=Column(Double, nullable=False))


class MemoryRuleRow(SQLModel, table=True):
    """One stored :class:`~workflows.contracts.memory.MemoryRule`: ``body`` is the rule itself."""

    __tablename__ = "memory_rules"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (
        UniqueConstraint("task_type", "root_cause", name="uq_memory_rules_type_cause"),
    )

    rule_id: str = _text(primary_key=True)
    task_type: str = _text()
    legacy_type: str = _legacy()
    root_cause: str = _text()
    status: str = _text()
    updated_by: str = _text()
    sha256: str = _text()
    body: dict[str, Any] = _json(dict[str, Any])
    created_at: datetime | None = _time(nullable=True)
    last_validated: datetime | None = _time(nullable=True)


class MemoryTemplateRow(SQLModel, table=True):
    """One stored :class:`~workflows.contracts.memory.ProceduralTemplate` (``body``)."""

    __tablename__ = "memory_templates"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (Index("ix_memory_templates_type", "task_type"),)

    template_id: str = _text(primary_key=True)
    task_type: str = _text()
    legacy_type: str = _legacy()
    job_sha256: str = _text()
    cached: bool = Field(sa_column=Column(Boolean, nullable=False))
    body: dict[str, Any] = _json(dict[str, Any])


class MemoryLedgerRow(SQLModel, table=True):
    """One memory ledger entry, chained to the one before it by ``prev``.

    ``sha256`` is the digest of the canonical JSON of ``entry_id``, ``kind``, ``run_id``,
    ``task_id``, ``body`` and ``prev`` (see :mod:`activities.memory.store.ledger`).
    """

    __tablename__ = "memory_ledger"  # pyright: ignore[reportAssignmentType]

    seq: int | None = Field(
        default=None, sa_column=Column(BigInteger, Identity(), primary_key=True)
    )
    entry_id: str = _text(unique=True)
    kind: str = _text()
    run_id: str = _text()
    task_id: str = _text()
    body: dict[str, Any] = _json(dict[str, Any])
    prev: str = _text()
    sha256: str = _text()
    recorded_at: datetime | None = Field(
        default=None,
        sa_column=Column(DateTime(timezone=True), nullable=False, server_default=func.now()),
    )


EPISODES = SQLModel.metadata.tables["memory_episodes"]
RULES = SQLModel.metadata.tables["memory_rules"]
TEMPLATES = SQLModel.metadata.tables["memory_templates"]
LEDGER = SQLModel.metadata.tables["memory_ledger"]
"""The SQLAlchemy ``Table`` objects behind the rows above, for Core statements."""


def canonical(value: Any) -> str:
    """The canonical JSON of a value: sorted keys, compact separators, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def rule_checksum(rule: MemoryRule) -> str:
    """The sha256 of a rule's canonical JSON, its own ``sha256`` field left out."""
    return sha256_hex(canonical(rule.model_dump(mode="json", exclude={"sha256"})))


def job_checksum(job: JobSpec) -> str:
    """The sha256 of a job spec's canonical JSON: equal jobs, equal checksums."""
    return sha256_hex(canonical(job.model_dump(mode="json")))


def template_id(task_type: str, job_sha256: str) -> str:
    """The deterministic id of the template of one job spec for one task type."""
    return "tpl-" + sha256_hex(f"{task_type}/{job_sha256}")[:12]


def episode_row(episode: Episode) -> dict[str, Any]:
    """The column values of one episode; JSON columns are repaired so PostgreSQL takes them.

    ``fix`` and ``metrics`` hold :class:`~database.limits.JsonText`, so the engine
    must serialise JSON with :func:`~database.limits.serialize`.
    """
    row = episode.model_dump(exclude={"changes", "fix", "metrics"})
    row["changes"] = [fit_json(c.model_dump(mode="json")).value for c in episode.changes]
    row["fix"] = fit_json(dict(episode.fix)).text
    row["metrics"] = fit_json(episode.metrics).text
    if row["recorded_at"].tzinfo is None:  # a naive time is taken as UTC, never as local time
        row["recorded_at"] = row["recorded_at"].replace(tzinfo=UTC)
    return row


def rule_row(rule: MemoryRule) -> tuple[MemoryRule, dict[str, Any]]:
    """A rule with a fresh checksum, and the column values that store it.

    Raises:
        ValueError: the rule does not survive JSON (a NaN value, for one).
    """
    stored = rule.model_copy(update={"sha256": rule_checksum(rule)})
    body = stored.model_dump(mode="json")
    try:
        MemoryRule.model_validate(body)
    except ValidationError as err:
        raise ValueError(f"rule {rule.rule_id} cannot be stored: {summary(err)}") from None
    return stored, {"rule_id": stored.rule_id, "task_type": stored.task_type,
                    "root_cause": stored.root_cause, "status": stored.status,
                    "updated_by": stored.updated_by, "sha256": stored.sha256, "body": body,
                    "created_at": stored.created_at, "last_validated": stored.last_validated}


def template_row(template: ProceduralTemplate) -> dict[str, Any]:
    """The column values that store a template."""
    return {"template_id": template.template_id, "task_type": template.task_type,
            "job_sha256": template.job_sha256, "cached": template.cached,
            "body": template.model_dump(mode="json")}


def read_template(body: Any) -> ProceduralTemplate | None:
    """The template a stored body holds, or ``None`` if it is not a valid one."""
    try:
        return ProceduralTemplate.model_validate(body)
    except ValidationError:
        return None


# --- what a person may edit in a rule ------------------------------------------------------

_ARG_FIELD = re.compile(r"args\.[A-Za-z0-9_-]+")
RESOURCE_FIELDS = ("memory_mb", "timeout_s", "cpus")
EDITABLE = "args.<name>, resources.memory_mb, resources.timeout_s or resources.cpus"
LIMITS: tuple[str, ...] = get_args(Limit)


def _is_number(value: Scalar) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def field_problem(field: str) -> str | None:
    """Why ``field`` may not be edited, or ``None`` if it may."""
    if _ARG_FIELD.fullmatch(field) or field in {f"resources.{n}" for n in RESOURCE_FIELDS}:
        return None
    return f"field {field!r} cannot be edited: use {EDITABLE}"


def value_problem(field: str, value: Scalar) -> str | None:
    """Why a job spec would refuse ``value`` for ``field``, or ``None`` if it accepts it."""
    if not field.startswith("resources."):
        return None
    if not _is_number(value):
        return f"{field} must be a number, not {value!r}"
    try:
        Resources.model_validate({field.removeprefix("resources."): value})
    except ValidationError as err:
        return f"{field}={value!r} is out of range: {err.errors()[0]['msg']}"
    return None


def problems(parameters: dict[str, Scalar], limits: dict[str, str],
             observation: str | None) -> list[str]:
    """Everything wrong with an edit before it meets the rule; empty if nothing is."""
    found: list[str] = []
    for field, value in parameters.items():
        found.append(field_problem(field) or value_problem(field, value) or "")
    for field, limit in limits.items():
        wrong = None if limit in LIMITS else f"limit of {field} must be max, min or set, " \
            f"not {limit!r}"
        found.append(field_problem(field) or wrong or "")
    if observation is not None and not observation.strip():
        found.append("the observation must not be empty")
    if not (parameters or limits or observation is not None):
        found.append("nothing to change: give values, limits or an observation")
    return [problem for problem in found if problem]


def edited_rule(rule: MemoryRule, parameters: dict[str, Scalar], limits: dict[str, str],
                observation: str | None, by: str) -> MemoryRule:
    """The rule with an edit applied (see :func:`problems`), in the name of ``by``.

    Raises:
        ValueError: the edited recommendation is not valid (a limit without a value, a
            ``max``/``min`` on a value that is not a number, too many fields).
    """
    values = {**rule.recommendation.parameters, **parameters}
    bounds = {**rule.recommendation.limits, **limits}
    refused = [f"limit of {field} has no value: set one with {field}=VALUE"
               for field in bounds if field not in values]
    refused += [f"{field} has limit {bound}, so its value must be a number, not "
                f"{values[field]!r}" for field, bound in bounds.items()
                if bound in ("max", "min") and field in values and not _is_number(values[field])]
    if refused:
        raise ValueError(f"rule {rule.rule_id} not changed: " + "; ".join(refused))
    try:
        recommendation = Recommendation.model_validate(
            {"action": rule.recommendation.action, "parameters": values, "limits": bounds})
    except ValidationError as err:
        raise ValueError(f"rule {rule.rule_id} not changed: {summary(err)}") from None
    update: dict[str, Any] = {"recommendation": recommendation, "updated_by": by}
    if observation is not None:
        update["observation"] = observation
    return rule.model_copy(update=update)
