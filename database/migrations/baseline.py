"""The schema of revision 0001: the tables Assay kept before it had migrations, frozen.

A copy on purpose. The SQLModel rows in each ``schema`` module say what the tables are now and
change with the code; this says what revision 0001 creates, forever, so that a database built
from nothing and one upgraded from any earlier release go through the same revisions and end
the same. It also adopts a database made before migrations existed: :func:`create_schema` with
``missing_only`` adds what that release's stores had not created yet, and touches no row.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    DateTime,
    Double,
    Identity,
    Index,
    Integer,
    MetaData,
    Sequence,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB

from database.migrations.ddl import append_only_ddl

REVISION = "0001"
METADATA = MetaData()
APPEND_ONLY = ("memory_ledger", "skill_events")
"""Tables that refuse UPDATE, DELETE and TRUNCATE (see :func:`append_only_ddl`)."""


def _text(name: str, *, primary_key: bool = False, unique: bool = False) -> Column[Any]:
    return Column(name, Text, primary_key=primary_key, unique=unique, nullable=False)


def _json(name: str) -> Column[Any]:
    return Column(name, JSONB, nullable=False)


def _time(name: str, *, nullable: bool = False, now: bool = False) -> Column[Any]:
    return Column(name, DateTime(timezone=True), nullable=nullable,
                  server_default=func.now() if now else None)


def _number(name: str, kind: type[BigInteger | Integer | Double[float]] = BigInteger,
            ) -> Column[Any]:
    return Column(name, kind, nullable=False)


Table("execution_events", METADATA,
      _text("id", primary_key=True), Column("seq", BigInteger, Identity(), nullable=False),
      _text("run_id"), _text("node_id"), _text("event_type"), _text("event_subtype"),
      _text("agent_name"), _time("timestamp"), Column("duration_ms", BigInteger),
      _number("execution_order"), _number("depth", Integer), _text("status"),
      _json("inputs"), _json("outputs"), _json("meta"), Column("parent_event_id", Text),
      _time("recorded_at", now=True),
      Index("ix_execution_events_run_seq", "run_id", "seq"),
      Index("ix_execution_events_run_node_order", "run_id", "node_id", "execution_order"),
      Index("ix_execution_events_parent", "parent_event_id"))

Table("memory_episodes", METADATA,
      _text("episode_id", primary_key=True), _time("recorded_at"), _text("run_id"),
      _text("task_id"), _text("task_type"), _text("phase"), _number("attempt", Integer),
      _text("root_cause"), _text("patch_id"), _text("patch_source"), _json("changes"),
      _text("outcome"), _json("fix"), _text("environment"), _text("job_sha256"),
      _json("metrics"), _number("duration_s", Double),
      Index("ix_memory_episodes_type_time", "task_type", "recorded_at"),
      Index("ix_memory_episodes_type_cause", "task_type", "root_cause"))

Table("memory_rules", METADATA,
      _text("rule_id", primary_key=True), _text("task_type"), _text("root_cause"),
      _text("status"), _text("updated_by"), _text("sha256"), _json("body"),
      _time("created_at", nullable=True), _time("last_validated", nullable=True),
      UniqueConstraint("task_type", "root_cause", name="uq_memory_rules_type_cause"))

Table("memory_templates", METADATA,
      _text("template_id", primary_key=True), _text("task_type"), _text("job_sha256"),
      Column("cached", Boolean, nullable=False), _json("body"),
      Index("ix_memory_templates_type", "task_type"))

Table("memory_ledger", METADATA,
      Column("seq", BigInteger, Identity(), primary_key=True), _text("entry_id", unique=True),
      _text("kind"), _text("run_id"), _text("task_id"), _json("body"), _text("prev"),
      _text("sha256"), _time("recorded_at", now=True))

Table("skills", METADATA,
      _text("skill_id", primary_key=True), _text("name"), _number("version", Integer),
      _text("kind"), _text("status"), _text("origin"), _json("pattern"),
      _number("retrieved"), _number("used"), _number("succeeded"),
      _number("total_duration_s", Double), _number("total_cost_usd", Double),
      _time("last_used", nullable=True), _number("evidence_successes", Integer),
      _number("evidence_failures", Integer), _number("deviations", Integer),
      _number("confidence", Double), _number("share", Double), _text("note"),
      _time("created_at"), _time("updated_at"),
      Column("revision", BigInteger, Sequence("skill_revision"), nullable=False),
      UniqueConstraint("name", "version", name="uq_skills_name_version"),
      Index("ix_skills_status", "status"),
      Index("ix_skills_revision", "revision"))

Table("skill_events", METADATA,
      Column("seq", BigInteger, Identity(), primary_key=True), _text("skill_id"),
      _time("at", now=True), _text("by"), _text("action"), _json("detail"),
      Index("ix_skill_events_skill", "skill_id", "seq"))

Table("skill_uses", METADATA,
      _text("key", primary_key=True), _text("skill_id"), _time("at"),
      Column("succeeded", Boolean, nullable=False), _text("deviation"))

TABLES = frozenset(METADATA.tables)
"""The names of the tables revision 0001 creates."""


def create_schema(bind: Connection, *, missing_only: bool) -> None:
    """Create revision 0001's tables, indexes, sequence and append-only guards.

    Args:
        bind: The connection, inside the migration's transaction.
        missing_only: Create only what is missing (adopting a database made before
            migrations); otherwise anything already there is an error.
    """
    METADATA.create_all(bind, checkfirst=missing_only)
    for table in APPEND_ONLY:
        for statement in append_only_ddl(table):
            bind.exec_driver_sql(statement)


def drop_schema(bind: Connection) -> None:
    """Drop everything :func:`create_schema` creates, rows included."""
    METADATA.drop_all(bind)
    for table in APPEND_ONLY:
        bind.exec_driver_sql(f"DROP FUNCTION IF EXISTS {table}_refuse_change()")
