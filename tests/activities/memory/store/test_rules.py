"""The rules part of MemoryStore: checksummed, never applied once changed outside Assay."""

from __future__ import annotations

import pytest

from activities.memory.store import (
    MemoryStore,
    RuleNotFound,
    RuleTampered,
    RuleUnreadable,
    rule_checksum,
)
from tests.activities.memory.store.support import T0, TYPE, db, sql
from workflows.contracts.memory import MemoryRule, Recommendation
from workflows.contracts.plan import Scalar


def make_rule(rule_id: str = "rule-1", *, root_cause: str = "out_of_memory",
              confidence: float = 0.8) -> MemoryRule:
    return MemoryRule(
        rule_id=rule_id, task_type=TYPE, root_cause=root_cause,
        pattern="out of memory in 3 tasks", observation="halving the batch size fixed it",
        recommendation=Recommendation(action="cap the batch size",
                                      parameters={"args.batch_size": 16},
                                      limits={"args.batch_size": "max"}),
        occurrences=3, success_count=3, confidence=confidence, created_at=T0)


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
