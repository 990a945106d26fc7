"""Schema migrations on real PostgreSQL: new databases, the previous release's, many openers.

``tests/data/migrations/previous_release.sql`` is a database as the last release before
migrations left it: the schema its three stores created, and rows each of them wrote.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel import SQLModel

import activities.events.schema
import activities.llm.schema
import activities.memory.schema
import database.migrations
import skills.schema
from activities.events.store import EventStore, insert_rows
from activities.memory.memory import Memory
from activities.memory.schema import job_checksum, rule_row
from activities.memory.store import LedgerEntry, MemoryStore, MemoryStoreUnavailable
from database.engine import Database
from database.limits import event_row
from database.migrations import SchemaUnknown, baseline, head, revisions, upgrade
from skills.store import SkillStore
from tests.workflows.contracts.test_kinds import OLS
from workflows.contracts.execution import EventRecord
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import (
    ConsultInput,
    ConsultTask,
    Episode,
    MemoryRule,
    ProceduralTemplate,
    Recommendation,
)
from workflows.contracts.plan import JobSpec

db = pytest.mark.integration
PREVIOUS = Path(__file__).resolve().parents[1] / "data" / "migrations" / "previous_release.sql"
MODELS = (activities.events.schema, activities.memory.schema, activities.llm.schema,
          skills.schema)
"""The modules whose SQLModel rows make up the schema."""
LATER_TABLES = frozenset({"budget_ledgers", "budget_reservations"})
"""Tables revisions after the baseline add (0002: the run budget ledger)."""
CHANGED_TABLES = frozenset({"execution_events", "memory_episodes", "memory_rules",
                            "memory_templates"})
"""Baseline tables later revisions change (0003: events name their execution; 0004: memory
keeps each row's task type from before kinds)."""

BATCH = "args.batch_size"

CATALOGUE = {
    "columns": """SELECT table_name, column_name, ordinal_position, data_type, is_nullable,
                         column_default, is_identity, identity_generation
                  FROM information_schema.columns WHERE table_schema = 'public'""",
    "constraints": """SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
                      FROM pg_constraint WHERE connamespace = 'public'::regnamespace""",
    "indexes": """SELECT tablename, indexname, indexdef FROM pg_indexes
                  WHERE schemaname = 'public'""",
    "triggers": """SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid)
                   FROM pg_trigger WHERE NOT tgisinternal""",
    "functions": """SELECT proname, pg_get_functiondef(oid) FROM pg_proc
                    WHERE pronamespace = 'public'::regnamespace""",
    "sequences": """SELECT sequence_name, data_type, start_value, increment
                     FROM information_schema.sequences WHERE sequence_schema = 'public'""",
}
"""What a schema is made of, read from PostgreSQL's own catalogue."""


@pytest.fixture
async def engine(fresh_database_url: str) -> AsyncIterator[AsyncEngine]:
    made = create_async_engine(fresh_database_url)
    yield made
    await made.dispose()


async def new_database(server_url: str) -> str:
    name = f"m_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


async def load_previous_release(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        assert raw is not None
        await raw.execute(PREVIOUS.read_text(encoding="utf-8"))  # many statements at once


async def schema(engine: AsyncEngine, *, leave_out: frozenset[str] = frozenset(),
                 ) -> dict[str, list[tuple[str, ...]]]:
    """Every column, constraint, index, trigger, function and sequence; Alembic's table and
    the tables in ``leave_out`` aside."""
    found: dict[str, list[tuple[str, ...]]] = {}
    async with engine.connect() as conn:
        for kind, query in CATALOGUE.items():
            rows = (await conn.execute(text(query))).all()
            found[kind] = sorted(tuple(map(str, row)) for row in rows
                                 if row[0] != "alembic_version" and row[0] not in leave_out)
    return found


async def rows(engine: AsyncEngine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the baseline's tables, in the baseline's columns."""
    async with engine.connect() as conn:
        return {name: sorted(map(tuple, (await conn.execute(
                    text(f"SELECT {', '.join(table.c.keys())} FROM {name}"))).all()), key=repr)
                for name, table in sorted(baseline.METADATA.tables.items())}


TYPED = ("memory_episodes", "memory_rules", "memory_templates")
"""Tables whose rows 0004 moves from an old task type to its kind (a template tells it)."""


def kept(found: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[Any]]:
    """The rows a migration keeps as they were: all, but only the ids of the typed ones."""
    return {name: [row[0] for row in table] if name in TYPED else table
            for name, table in found.items()}


def command_downgrade(connection: Connection, target: str) -> None:
    """Alembic's downgrade to ``target``, on ``connection``, as Assay configures Alembic."""
    config = Config()
    folder = Path(database.migrations.__file__).parent
    config.set_main_option("script_location", str(folder))
    config.attributes["connection"] = connection
    command.downgrade(config, target)


async def versions(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return list((await conn.execute(text("SELECT version_num FROM alembic_version")))
                    .scalars())


@db
async def test_a_new_database_gets_exactly_the_schema_of_the_previous_release(
        engine: AsyncEngine, postgres_server_url: str) -> None:
    assert await upgrade(engine) == (None, head())
    assert await revisions(engine) == (head(), head())
    previous = create_async_engine(await new_database(postgres_server_url))
    try:
        await load_previous_release(previous)
        assert (await schema(engine, leave_out=LATER_TABLES | CHANGED_TABLES)
                == await schema(previous, leave_out=CHANGED_TABLES))
        await upgrade(previous)
        assert await schema(engine) == await schema(previous), \
            "a new database and the previous release's, upgraded, end the same"
    finally:
        await previous.dispose()


@db
async def test_the_newest_revision_builds_what_the_models_declare(engine: AsyncEngine) -> None:
    await upgrade(engine)

    def differences(conn: Connection) -> list[Any]:
        return compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)

    async with engine.connect() as conn:
        assert await conn.run_sync(differences) == []
    assert set(SQLModel.metadata.tables) == baseline.TABLES | LATER_TABLES, \
        "every model table is migrated"


@db
async def test_a_database_of_the_previous_release_is_upgraded_in_place(
        engine: AsyncEngine, fresh_database_url: str) -> None:
    await load_previous_release(engine)
    before = await rows(engine)
    assert await revisions(engine) == (None, head())

    async with MemoryStore(fresh_database_url) as memory:
        assert kept(await rows(engine)) == kept(before) and await versions(engine) == [head()]
        assert await memory.verify_ledger() == 3
        assert [rule.rule_id for rule in (await memory.rules())[0]] == ["rule-1"]
        await memory.append_ledger([LedgerEntry(entry_id="entry-4", kind="note")])
        assert await memory.verify_ledger() == 4, "new entries chain onto the old ones"
    async with SkillStore(fresh_database_url) as library:
        assert (await library.get("csv-profile@v1")).status == "active"
        assert len(await library.events("csv-profile@v1")) == 3
    async with EventStore(fresh_database_url) as events:
        assert await events.count("run-1") == 3
        assert await events.executions("run-1") == {"": 3}, "older events name no execution"
    for statement in ("UPDATE memory_ledger SET kind = 'note'", "DELETE FROM memory_ledger",
                      "UPDATE skill_events SET by = 'eve'", "DELETE FROM skill_events"):
        with pytest.raises(DBAPIError, match="is append-only"):
            async with engine.begin() as conn:
                await conn.execute(text(statement))


@db
async def test_migrating_again_changes_nothing(engine: AsyncEngine) -> None:
    await load_previous_release(engine)
    assert await upgrade(engine) == (None, head())
    migrated = (await schema(engine), await rows(engine))
    assert await upgrade(engine) == (head(), head())
    assert (await schema(engine), await rows(engine)) == migrated
    assert await versions(engine) == [head()]


@db
@pytest.mark.parametrize("previous_release", [False, True], ids=["new", "previous-release"])
async def test_stores_opening_at_once_migrate_once(engine: AsyncEngine, fresh_database_url: str,
                                                   previous_release: bool) -> None:
    before: dict[str, list[tuple[Any, ...]]] = {table: [] for table in sorted(baseline.TABLES)}
    if previous_release:
        await load_previous_release(engine)
        before = await rows(engine)
    stores: list[Database] = [kind(fresh_database_url)
                              for kind in (EventStore, MemoryStore, SkillStore) * 3]
    try:
        await asyncio.gather(*(store.open() for store in stores))
    finally:
        await asyncio.gather(*(store.close() for store in stores))
    assert await versions(engine) == [head()]
    assert kept(await rows(engine)) == kept(before)


@db
async def test_a_database_of_the_previous_release_missing_tables_gets_them(
        engine: AsyncEngine, fresh_database_url: str) -> None:
    async with engine.begin() as conn:  # as when only the event store had ever opened
        await conn.run_sync(baseline.METADATA.tables["execution_events"].create)
        await conn.execute(text("INSERT INTO execution_events VALUES ('e1', DEFAULT, 'run-1',"
                                " 'n', 't', 's', 'a', now(), NULL, 0, 0, 'ok', '{}', '{}',"
                                " '{}', NULL, DEFAULT)"))
    async with EventStore(fresh_database_url) as events:
        assert await events.count("run-1") == 1
    assert await versions(engine) == [head()]
    async with MemoryStore(fresh_database_url) as memory:
        await memory.append_ledger([LedgerEntry(entry_id="entry-1", kind="note")])
    with pytest.raises(DBAPIError, match="memory_ledger is append-only"):
        async with engine.begin() as conn:
            await conn.execute(text("DELETE FROM memory_ledger"))


@db
async def test_a_database_a_newer_release_migrated_is_refused_with_what_to_do(
        engine: AsyncEngine, fresh_database_url: str) -> None:
    await upgrade(engine)
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    store = MemoryStore(fresh_database_url)
    with pytest.raises(MemoryStoreUnavailable) as caught:
        await store.open()
    await store.close()
    assert "schema is at revision 0099" in str(caught.value)
    assert "upgrade Assay" in str(caught.value)
    with pytest.raises(SchemaUnknown):
        await revisions(engine)


@db
async def test_events_name_their_execution_and_the_release_before_still_writes(
        engine: AsyncEngine, fresh_database_url: str) -> None:
    """A worker of the release before, serving its pinned runs, writes as it did."""
    async with EventStore(fresh_database_url) as events, events.engine.begin() as conn:
        rows = [event_row(EventRecord(id=f"e{n}", run_id="run-1", node_id="run",
                                      event_type="checkpoint", execution=execution,
                                      timestamp=datetime.now(UTC)))
                for n, execution in ((1, "first"), (1, "first"), (2, "reset"))]
        assert await insert_rows(conn, rows) == 2, "a retried write is still a no-op"
    older = ("INSERT INTO execution_events (id, run_id, node_id, event_type, event_subtype,"
             " agent_name, timestamp, execution_order, depth, status, inputs, outputs, meta)"
             " VALUES ('e3', 'run-1', 'run', 't', 's', 'a', now(), 0, 0, 'ok', '{}', '{}',"
             " '{}') ON CONFLICT (id) DO NOTHING")
    async with engine.begin() as conn:
        for _ in range(2):
            await conn.execute(text(older))
    async with EventStore(fresh_database_url) as events:
        assert await events.executions("run-1") == {"first": 1, "reset": 1, "": 1}
        assert await events.count("run-1", "reset") == 1 and await events.count("run-1") == 3


OLD_TYPE = "fit-ols-model-housing-prices"
"""A task type as the release before made it: the first words of the action."""


async def learned_under_old_types(engine: AsyncEngine) -> str:
    """A template, a rule and an episode of one old type, and a rule of a type no job tells.

    Returns the kind the template's job tells.
    """
    job = JobSpec(code=OLS, source=OLS, filename="job.py", expected_metrics=["r2"])
    action = "Fit an OLS model of housing prices"
    template = ProceduralTemplate(
        template_id="tpl-old", task_type=OLD_TYPE, action=action, job=job,
        job_sha256=job_checksum(job), input_names=["housing.csv"], clean_successes=2,
        cached=True)
    rules = [rule_row(MemoryRule(
        rule_id=rule_id, task_type=kind, root_cause="out_of_memory", pattern="oom",
        observation="ran out of memory", occurrences=3, success_count=3, confidence=0.8,
        recommendation=Recommendation(action="smaller batches", parameters={BATCH: 16},
                                      limits={BATCH: "max"})))[1]
        for rule_id, kind in (("sem-old", OLD_TYPE), ("sem-words", "describe-sample"))]
    episode = Episode(
        episode_id="ep-old", recorded_at=datetime(2026, 3, 1, tzinfo=UTC), run_id="run-1",
        task_id="a", task_type=OLD_TYPE, phase="execution", attempt=1,
        root_cause="out_of_memory", outcome="fixed").model_dump()  # JSON columns: plain
    tables = baseline.METADATA.tables
    async with engine.begin() as conn:
        await conn.execute(tables["memory_templates"].insert().values(
            template_id="tpl-old", task_type=OLD_TYPE, job_sha256=template.job_sha256,
            cached=True, body=template.model_dump(mode="json")))
        await conn.execute(tables["memory_rules"].insert(), rules)
        await conn.execute(tables["memory_episodes"].insert().values(**episode))
    return task_kind(action, job, ["housing.csv"])


@db
async def test_memory_learned_under_old_task_types_survives_as_kinds(
        engine: AsyncEngine, fresh_database_url: str) -> None:
    await load_previous_release(engine)
    kind = await learned_under_old_types(engine)
    assert kind == "regression.linear:sklearn|csv|r2"
    async with MemoryStore(fresh_database_url) as memory:  # opening migrates
        (template,) = await memory.templates(kind)
        assert (template.template_id, template.task_type) == ("tpl-old", kind)
        (rule,), problems = await memory.rules(kind)
        assert (rule.rule_id, rule.task_type, problems) == ("sem-old", kind, [])
        assert [e.episode_id for e in await memory.episodes(kind)] == ["ep-old"]
        (kept,), _ = await memory.rules("describe-sample")  # no job tells its kind
        assert kept.rule_id == "sem-words"
        asked = ConsultTask(task_id="t", action="Estimate prices linearly",
                            job=JobSpec(code=OLS, source=OLS, args={"batch_size": 64},
                                        expected_metrics=["R^2"]),
                            input_names=["data/housing.csv"])
        advice = (await Memory(memory).consult_memory(
            ConsultInput(run_id="r", tasks=[asked]))).advice[0]
    assert [use.rule_id for use in advice.rules] == ["sem-old"], advice.skipped
    async with engine.connect() as conn:
        legacy = (await conn.execute(text(
            "SELECT legacy_type FROM memory_rules UNION ALL SELECT legacy_type FROM "
            "memory_templates UNION ALL SELECT legacy_type FROM memory_episodes"))).scalars()
        assert sorted(legacy) == ["describe-sample", OLD_TYPE, OLD_TYPE, OLD_TYPE,
                                  *["train-classifier"] * 3]  # 2 rules, 2 episodes, 2 templates


@db
async def test_going_back_a_revision_gives_memory_its_old_task_types(
        engine: AsyncEngine) -> None:
    await load_previous_release(engine)
    await learned_under_old_types(engine)
    await upgrade(engine)
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync: command_downgrade(sync, "0003"))
        types = (await conn.execute(text(
            "SELECT task_type, body->>'task_type' FROM memory_templates UNION ALL "
            "SELECT task_type, body->>'task_type' FROM memory_rules UNION ALL "
            "SELECT task_type, task_type FROM memory_episodes"))).all()
    assert sorted(map(tuple, types)) == sorted([  # each old template, rule and episode
        *[(OLD_TYPE, OLD_TYPE)] * 3, ("describe-sample", "describe-sample"),
        *[("train-classifier", "train-classifier")] * 3])
