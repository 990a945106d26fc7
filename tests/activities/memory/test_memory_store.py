"""MemoryStore on real PostgreSQL: episodes, pruning, checksummed rules, templates, ledger."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from activities.memory.store import (
    LedgerBroken,
    LedgerEntry,
    MemoryStore,
    MemoryStoreUnavailable,
    RuleNotFound,
    RuleTampered,
    RuleUnreadable,
    job_checksum,
    rule_checksum,
    template_id,
)
from workflows.contracts.executive import PatchChange
from workflows.contracts.memory import Episode, MemoryRule, Recommendation
from workflows.contracts.plan import JobSpec, Scalar

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TYPE = "train-classifier"


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[MemoryStore]:
    async with MemoryStore(fresh_database_url) as opened:
        yield opened


def episode(n: int, *, task_type: str = TYPE, run: str = "run-1", task: str = "a",
            outcome: str = "failure", root_cause: str = "out_of_memory",
            at: datetime | None = None) -> Episode:
    return Episode(episode_id=f"{task_type}-{n}", recorded_at=at or T0 + timedelta(minutes=n),
                   run_id=run, task_id=task, task_type=task_type, phase="execution",
                   attempt=1, root_cause=root_cause, outcome=outcome)


def make_rule(rule_id: str = "rule-1", *, root_cause: str = "out_of_memory",
              confidence: float = 0.8) -> MemoryRule:
    return MemoryRule(
        rule_id=rule_id, task_type=TYPE, root_cause=root_cause,
        pattern="out of memory in 3 tasks", observation="halving the batch size fixed it",
        recommendation=Recommendation(action="cap the batch size",
                                      parameters={"args.batch_size": 16},
                                      limits={"args.batch_size": "max"}),
        occurrences=3, success_count=3, confidence=confidence, created_at=T0)


async def sql(store: MemoryStore, statement: str, **params: Any) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(statement), params)


# --- episodes ------------------------------------------------------------------------------


@db
async def test_episodes_are_stored_once_and_read_back_newest_first(store: MemoryStore) -> None:
    first = episode(1).model_copy(update={
        "changes": [PatchChange(field="args.batch_size", old_value=64, new_value=32)],
        "fix": {"args.batch_size": 32}, "metrics": {"auc": 0.91, "loss": float("nan")},
        "patch_source": "rule_table", "duration_s": 1.5})
    batch = [first, episode(2, root_cause="timeout"), episode(3)]
    assert await store.record_episodes(batch) == 3
    assert await store.record_episodes(batch) == 0, "a retried write stores nothing twice"
    assert await store.record_episodes([*batch, episode(4)]) == 1

    got = await store.episodes(TYPE)
    assert [e.episode_id for e in got] == [f"{TYPE}-{n}" for n in (4, 3, 2, 1)]
    assert got[-1] == first.model_copy(update={"metrics": {"auc": 0.91, "loss": "nan"}})
    oom = await store.episodes(TYPE, root_cause="out_of_memory", limit=2)
    assert [e.episode_id for e in oom] == [f"{TYPE}-4", f"{TYPE}-3"]
    assert await store.episodes("other-type") == []


@db
async def test_an_episode_row_that_is_no_longer_valid_is_skipped(store: MemoryStore) -> None:
    await store.record_episodes([episode(1), episode(2)])
    await sql(store, "UPDATE memory_episodes SET patch_source = 'bogus' WHERE episode_id = :e",
              e=f"{TYPE}-2")
    assert [e.episode_id for e in await store.episodes(TYPE)] == [f"{TYPE}-1"]


@db
async def test_failure_tasks_counts_each_failed_task_once(store: MemoryStore) -> None:
    await store.record_episodes([
        episode(1, run="r1", task="a"), episode(2, run="r1", task="a"),  # two attempts
        episode(3, run="r1", task="b", outcome="fixed"),
        episode(4, run="r2", task="a", outcome="unfixed"),
        episode(5, run="r2", task="c", outcome="success"),
        episode(6, run="r3", task="a", root_cause="timeout"),
        episode(7, run="r3", task="a", task_type="other-type"),
    ])
    assert await store.failure_tasks(TYPE, "out_of_memory") == 3
    assert await store.failure_tasks(TYPE, "timeout") == 1
    assert await store.failure_tasks(TYPE, "missing_dependency") == 0


@db
async def test_prune_by_age_then_by_keep_on_twenty_thousand_episodes(store: MemoryStore) -> None:
    types = [f"type-{k}" for k in range(4)]
    # 5 000 per type, one every 10 minutes back from T0: the oldest is ~34.7 days old.
    assert await store.record_episodes([
        episode(i, task_type=kind, at=T0 - timedelta(minutes=10 * i))
        for kind in types for i in range(5000)]) == 20_000

    # Older than 30 days (43 200 minutes) means i > 4320: 679 per type.
    assert await store.prune(T0, keep=100_000, max_age_days=30) == 4 * 679
    assert await store.prune(T0, keep=1000, task_type="type-0") == 4321 - 1000
    assert await store.prune(T0, keep=1000, max_age_days=30) == 3 * (4321 - 1000)
    assert await store.prune(T0, keep=1000, max_age_days=30) == 0

    for kind in types:
        kept = await store.episodes(kind, limit=5000)
        assert len(kept) == 1000
        assert (kept[0].episode_id, kept[-1].episode_id) == (f"{kind}-0", f"{kind}-999")


@db
async def test_prune_breaks_ties_by_episode_id(store: MemoryStore) -> None:
    await store.record_episodes([episode(n, at=T0) for n in range(5)])
    assert await store.prune(T0, keep=2) == 3
    assert [e.episode_id for e in await store.episodes(TYPE)] == [f"{TYPE}-4", f"{TYPE}-3"]
    with pytest.raises(ValueError, match="must not be negative"):
        await store.prune(T0, keep=-1)


# --- rules ---------------------------------------------------------------------------------


@db
async def test_a_saved_rule_reads_back_checksummed(store: MemoryStore) -> None:
    saved = await store.save_rule(make_rule())
    assert saved.sha256 == rule_checksum(saved) and len(saved.sha256) == 64
    assert await store.rule("rule-1") == saved
    assert await store.rules(TYPE) == ([saved], [])
    assert await store.rule("rule-nope") is None

    # The same (task type, root cause) under another id replaces the rule that holds it.
    again = await store.save_rule(make_rule("rule-2", confidence=0.9))
    assert again.rule_id == "rule-1" and again.confidence == 0.9
    assert again.created_at == T0
    other = await store.save_rule(make_rule("rule-3", root_cause="timeout", confidence=0.95))
    rules, warnings = await store.rules()
    assert [r.rule_id for r in rules] == ["rule-3", "rule-1"] and warnings == []
    assert (await store.rules(statuses=("disabled",))) == ([], [])
    assert other.sha256 != again.sha256


@db
async def test_a_rule_changed_in_the_database_is_reported_and_not_used(
        store: MemoryStore) -> None:
    await store.save_rule(make_rule())
    await store.save_rule(make_rule("rule-2", root_cause="timeout"))
    await sql(store, """UPDATE memory_rules SET body = jsonb_set(body,
              '{recommendation,parameters,args.batch_size}', '64') WHERE rule_id = 'rule-1'""")

    rules, warnings = await store.rules(TYPE)
    assert [r.rule_id for r in rules] == ["rule-2"]
    assert len(warnings) == 1
    assert warnings[0].startswith("rule rule-1 was changed outside Assay (checksum mismatch)")
    assert "assay memory edit rule-1" in warnings[0]
    with pytest.raises(RuleTampered, match="changed outside Assay"):
        await store.rule("rule-1")

    # A person re-saving it adopts it as it now stands, in their name.
    adopted = await store.set_rule_status("rule-1", "disabled", "ada")
    assert adopted.recommendation.parameters == {"args.batch_size": 64}
    assert (adopted.status, adopted.updated_by) == ("disabled", "ada")
    assert await store.rule("rule-1") == adopted


@db
@pytest.mark.parametrize(("body", "message"), [
    ("jsonb_set(body, '{confidence}', '7')",
     "rule rule-1 is unreadable: confidence: Input should be less than or equal to 1"),
    ("'\"not a rule\"'::jsonb", "rule rule-1 is unreadable: value: Input should be a valid"),
    ("body - 'recommendation'", "rule rule-1 is unreadable: recommendation: Field required"),
])
async def test_an_unreadable_rule_is_reported_and_cannot_be_edited(
        store: MemoryStore, body: str, message: str) -> None:
    await store.save_rule(make_rule())
    await sql(store, f"UPDATE memory_rules SET body = {body} WHERE rule_id = 'rule-1'")
    rules, warnings = await store.rules()
    assert rules == [] and len(warnings) == 1
    assert warnings[0].startswith(message)
    with pytest.raises(RuleUnreadable, match="is unreadable") as caught:
        await store.rule("rule-1")
    assert not isinstance(caught.value, RuleTampered)
    with pytest.raises(RuleUnreadable, match="is unreadable"):
        await store.edit_rule("rule-1", parameters={"args.batch_size": 8}, by="ada")
    with pytest.raises(RuleUnreadable, match="is unreadable"):
        await store.set_rule_status("rule-1", "disabled", "ada")


@db
async def test_a_rule_is_edited_disabled_and_enabled(store: MemoryStore) -> None:
    await store.save_rule(make_rule())
    edited = await store.edit_rule(
        "rule-1", parameters={"args.batch_size": 12, "resources.memory_mb": 4096},
        limits={"resources.memory_mb": "min"}, observation="12 fits in memory", by="ada")
    assert edited.recommendation.parameters == {"args.batch_size": 12,
                                                "resources.memory_mb": 4096}
    assert edited.recommendation.limits == {"args.batch_size": "max",
                                            "resources.memory_mb": "min"}
    assert (edited.observation, edited.updated_by) == ("12 fits in memory", "ada")
    assert edited.sha256 == rule_checksum(edited)
    assert await store.rule("rule-1") == edited

    disabled = await store.set_rule_status("rule-1", "disabled", "bob")
    assert (disabled.status, disabled.updated_by) == ("disabled", "bob")
    assert await store.rules(statuses=("active", "demoted")) == ([], [])
    enabled = await store.set_rule_status("rule-1", "active", "ada")
    assert await store.rules(statuses=("active",)) == ([enabled], [])
    assert enabled.recommendation == edited.recommendation


@db
@pytest.mark.parametrize(("parameters", "limits", "message"), [
    ({"entry": "other.py"}, {}, "field 'entry' cannot be edited: use args.<name>"),
    ({"resources.gpus": 2}, {}, "field 'resources.gpus' cannot be edited"),
    ({"args.bad name": 1}, {}, "field 'args.bad name' cannot be edited"),
    ({"resources.memory_mb": 5}, {}, "resources.memory_mb=5 is out of range: Input should be "
                                     "greater than or equal to 16"),
    ({"resources.cpus": "many"}, {}, "resources.cpus must be a number, not 'many'"),
    ({}, {"args.batch_size": "sometimes"}, "limit of args.batch_size must be max, min or set"),
    ({}, {"args.epochs": "max"}, "limit of args.epochs has no value"),
    ({"args.batch_size": "big"}, {}, "args.batch_size has limit max, so its value must be a "
                                     "number, not 'big'"),
    ({}, {}, "nothing to change"),
])
async def test_a_bad_edit_is_refused_and_changes_nothing(
        store: MemoryStore, parameters: dict[str, Scalar], limits: dict[str, str],
        message: str) -> None:
    before = await store.save_rule(make_rule())
    with pytest.raises(ValueError, match="rule rule-1 not changed: ") as caught:
        await store.edit_rule("rule-1", parameters=parameters, limits=limits, by="ada")
    assert message in str(caught.value)
    assert await store.rule("rule-1") == before


@db
async def test_unknown_rules_and_statuses_are_named(store: MemoryStore) -> None:
    await store.save_rule(make_rule())
    with pytest.raises(RuleNotFound, match="no rule 'rule-9'"):
        await store.set_rule_status("rule-9", "disabled", "ada")
    with pytest.raises(RuleNotFound, match="no rule 'rule-9'"):
        await store.edit_rule("rule-9", observation="x", by="ada")
    with pytest.raises(ValueError, match="unknown rule status 'off'"):
        await store.set_rule_status("rule-1", "off", "ada")


# --- templates -----------------------------------------------------------------------------


def job(batch: int = 32) -> JobSpec:
    return JobSpec(code="print('fit')", args={"batch_size": batch}, expected_metrics=["auc"])


@db
async def test_a_job_becomes_a_template_after_two_clean_successes(store: MemoryStore) -> None:
    first = await store.note_clean_success(TYPE, "Train the classifier", job(), ["data.csv"], T0)
    assert first.template_id == template_id(TYPE, job_checksum(job()))
    assert first.template_id.startswith("tpl-") and len(first.template_id) == 16
    assert (first.clean_successes, first.cached) == (1, False)
    assert await store.templates(TYPE) == []

    second = await store.note_clean_success(TYPE, "Train the classifier", job(), [], T0)
    assert (second.clean_successes, second.cached) == (2, True)
    assert second.input_names == ["data.csv"] and second.created_at == T0
    other = await store.note_clean_success(TYPE, "Train the classifier", job(8), [], T0)
    assert other.template_id != second.template_id
    assert await store.templates(TYPE) == [second]
    assert await store.templates(cached_only=False) == [second, other]
    assert await store.templates("other-type", cached_only=False) == []

    used = await store.note_template_use(second.template_id, success=True, now=T0)
    assert used is not None and (used.uses, used.successes, used.last_used) == (1, 1, T0)
    used = await store.note_template_use(second.template_id, success=False, now=T0)
    assert used is not None and (used.uses, used.successes) == (2, 1)
    assert await store.note_template_use("tpl-000000000000", success=True, now=T0) is None


@db
async def test_concurrent_successes_of_one_job_are_all_counted(store: MemoryStore) -> None:
    noted = await asyncio.gather(*(
        store.note_clean_success(TYPE, "Train", job(), [], T0) for _ in range(6)))
    assert sorted(t.clean_successes for t in noted) == [1, 2, 3, 4, 5, 6]
    assert [t.clean_successes for t in await store.templates(TYPE)] == [6]


@db
async def test_an_unreadable_template_is_skipped(store: MemoryStore) -> None:
    await store.note_clean_success(TYPE, "Train", job(), [], T0)
    await store.note_clean_success(TYPE, "Train", job(8), [], T0)
    kept = await store.note_clean_success(TYPE, "Train", job(), [], T0)
    broken = await store.note_clean_success(TYPE, "Train", job(8), [], T0)
    await sql(store, "UPDATE memory_templates SET body = body - 'job' WHERE template_id = :t",
              t=broken.template_id)
    assert await store.templates(TYPE) == [kept]
    assert await store.note_template_use(broken.template_id, success=True, now=T0) is None


# --- ledger --------------------------------------------------------------------------------


def entries(*ids: str, run: str = "run-1") -> list[LedgerEntry]:
    return [LedgerEntry(entry_id=i, kind="rule", run_id=run, task_id="a",
                        body={"rule_id": i, "confidence": 0.5, "ratio": 1.0, "big": 1e30})
            for i in ids]


@db
async def test_ledger_appends_once_and_chains(store: MemoryStore) -> None:
    assert await store.append_ledger(entries("e1", "e2", "e2", "e3")) == 3
    assert await store.append_ledger(entries("e1", "e2", "e3")) == 0
    assert await store.append_ledger([*entries("e3"), *entries("e4", run="run-2")]) == 1
    assert await store.verify_ledger() == 4

    rows = await store.ledger()
    assert [r["entry_id"] for r in rows] == ["e1", "e2", "e3", "e4"]
    assert rows[0]["prev"] == "0" * 64
    assert [r["prev"] for r in rows[1:]] == [r["sha256"] for r in rows[:-1]]
    assert [r["entry_id"] for r in await store.ledger("run-2")] == ["e4"]
    assert [r["entry_id"] for r in await store.ledger(limit=2)] == ["e3", "e4"]


@db
@pytest.mark.parametrize("statement", [
    "UPDATE memory_ledger SET kind = 'note'",
    "DELETE FROM memory_ledger WHERE entry_id = 'e2'",
    "TRUNCATE memory_ledger",
])
async def test_the_ledger_refuses_changes(store: MemoryStore, statement: str) -> None:
    await store.append_ledger(entries("e1", "e2"))
    with pytest.raises(DBAPIError, match="memory_ledger is append-only"):
        await sql(store, statement)
    assert await store.verify_ledger() == 2


@db
@pytest.mark.parametrize(("tamper", "message"), [
    ("UPDATE memory_ledger SET body = '{\"rule_id\": \"forged\"}' WHERE seq = 2",
     "broken at seq 2 (entry e2): its content no longer matches its checksum"),
    ("UPDATE memory_ledger SET sha256 = repeat('a', 64) WHERE seq = 2",
     "broken at seq 2 (entry e2): its content no longer matches"),
    ("DELETE FROM memory_ledger WHERE seq = 2",
     "broken at seq 3 (entry e3): it does not carry the checksum of the entry before it"),
])
async def test_verify_finds_a_tampered_ledger(store: MemoryStore, tamper: str,
                                              message: str) -> None:
    await store.append_ledger(entries("e1", "e2", "e3"))
    await sql(store, "ALTER TABLE memory_ledger DISABLE TRIGGER ALL")
    await sql(store, tamper)
    await sql(store, "ALTER TABLE memory_ledger ENABLE TRIGGER ALL")
    with pytest.raises(LedgerBroken) as caught:
        await store.verify_ledger()
    assert message in str(caught.value)


# --- opening -------------------------------------------------------------------------------


@db
async def test_opening_twice_is_harmless(fresh_database_url: str) -> None:
    async with MemoryStore(fresh_database_url) as first, \
            MemoryStore(fresh_database_url) as second:
        await first.append_ledger(entries("e1"))
        assert await second.verify_ledger() == 1


async def test_an_unreachable_database_is_explained() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = MemoryStore(f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/assay")
    with pytest.raises(MemoryStoreUnavailable) as caught:
        await store.open()
    await store.close()
    message = str(caught.value)
    assert f"cannot open the memory store at postgresql+asyncpg://ada:***@127.0.0.1:{port}" \
        in message
    assert "secret" not in message and "assay up" in message
