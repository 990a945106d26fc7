"""A subagent's recovery memory in the store: updated in place, once per task, subagents only."""

from __future__ import annotations

from typing import Any

import pytest

from skills.store import SkillNotFound, SkillStore
from tests.skills.store.support import actions, db, make_skill
from workflows.contracts.reflection import PatchChange
from workflows.contracts.skills import SkillUse, TaskOutcome
from workflows.contracts.subagents import MemoryTry
from workflows.library.subagents import fix_key

BATCH = PatchChange(field="args.batch_size", old_value=64, new_value=8)
MODE = PatchChange(field="args.mode", old_value="exact", new_value="fast")


async def add_subagent(store: SkillStore) -> str:
    skill = make_skill(status="active")
    pattern = skill.pattern.model_copy(update={"kind": "subagent", "recovery": [MODE, BATCH]})
    stored = await store.add(skill.model_copy(update={"pattern": pattern}), by="ada")
    return stored.skill_id


@db
async def test_a_task_s_tries_update_the_memory_once(store: SkillStore) -> None:
    skill_id = await add_subagent(store)
    tries = [MemoryTry(fix=MODE, result="failed"), MemoryTry(fix=BATCH, result="cured")]
    updated = await store.record_memory(skill_id, key="run-1/a", tries=tries)
    assert updated is not None
    assert updated.pattern.recovery == [BATCH, MODE]
    assert updated.pattern.recovery_misses == {fix_key(MODE): 1}
    assert await store.record_memory(skill_id, key="run-1/a", tries=tries) is None
    stored = (await store.get(skill_id)).pattern
    assert stored.recovery_misses == {fix_key(MODE): 1}, "a repeated key counts once"
    assert await actions(store, skill_id) == ["created", "memory"]
    event = (await store.events(skill_id))[1]
    assert event.detail["key"] == "run-1/a"
    assert event.detail["memory"] == [fix_key(BATCH), fix_key(MODE)]


@db
async def test_a_cure_outside_the_memory_is_stored_first(store: SkillStore) -> None:
    skill_id = await add_subagent(store)
    rule = PatchChange(field="args.batch_size", old_value=64, new_value=32)
    await store.record_memory(skill_id, key="run-1/a", tries=[], cures=[rule])
    assert (await store.get(skill_id)).pattern.recovery == [rule, MODE, BATCH]


@db
async def test_only_a_subagent_keeps_a_memory_and_a_key_is_needed(store: SkillStore) -> None:
    skill = await store.add(make_skill(status="active"), by="ada")
    with pytest.raises(ValueError, match="not a subagent"):
        await store.record_memory(skill.skill_id, key="run-1/a", tries=[])
    with pytest.raises(ValueError, match="key"):
        await store.record_memory(skill.skill_id, key=" ", tries=[])
    with pytest.raises(SkillNotFound):
        await store.record_memory("no-such@v1", key="run-1/a", tries=[])


@db
async def test_an_outcome_teaches_the_memory_only_what_it_tried_or_was_cured_by(
        store: SkillStore) -> None:
    skill_id = await add_subagent(store)
    use = SkillUse(skill_id=skill_id, name="csv-profile", version=1, kind="subagent")
    rule = PatchChange(field="args.batch_size", old_value=64, new_value=32)

    def outcome(task_id: str, status: str, **fields: Any) -> TaskOutcome:
        return TaskOutcome(run_id="run-1", task_id=task_id, action="a", status=status,
                           skill=use, **fields)

    assert not await store.learn_memory(outcome("plain", "completed"))
    assert not await store.learn_memory(outcome("failed", "failed", fixes=[rule]))
    skill_use = outcome("skill", "completed", fixes=[rule])
    assert not await store.learn_memory(skill_use.model_copy(update={
        "skill": use.model_copy(update={"kind": "skill"})}))
    assert (await store.get(skill_id)).pattern.recovery == [MODE, BATCH]
    assert await store.learn_memory(outcome("cured", "completed", fixes=[rule]))
    assert (await store.get(skill_id)).pattern.recovery == [rule, MODE, BATCH]
