"""A subagent's recovery memory: choosing the next fix for a failing job, and the update rule."""

from __future__ import annotations

from typing import Any

from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.reflection import PatchChange
from workflows.contracts.subagents import MemoryTry, TryResult
from workflows.library.subagents import (
    DROP_AFTER,
    MEMORY_LIMIT,
    applied_change,
    cures_of,
    fix_key,
    next_fix,
    remembered,
)


def job(**args: Any) -> JobSpec:
    return JobSpec(code="print(1)\n", source="print(1)\n", filename="job.py",
                   args={"batch_size": 64, "mode": "exact", **args},
                   resources=Resources(memory_mb=512, timeout_s=60))


def fix(field: str, old: Any, new: Any, reason: str = "") -> PatchChange:
    return PatchChange(field=field, old_value=old, new_value=new, reason=reason)


def tried(change: PatchChange, result: TryResult) -> MemoryTry:
    return MemoryTry(fix=change, result=result)


BATCH = fix("args.batch_size", 64, 8, "out of memory at 512 MiB")
MODE = fix("args.mode", "exact", "fast")
TIMEOUT = fix("resources.timeout_s", 60.0, 30.0)


# --- choosing --------------------------------------------------------------------------------


def test_the_first_untried_fix_that_applies_is_chosen_with_the_change_it_makes() -> None:
    memory = [fix("args.epochs", 10, 5), BATCH, MODE]  # the job has no `epochs`
    found = next_fix(memory, job(), tried=[])
    assert found is not None
    chosen, change = found
    assert chosen == BATCH
    assert (change.field, change.old_value, change.new_value) == ("args.batch_size", 64, 8)
    assert change.reason == "out of memory at 512 MiB"


def test_a_fix_already_tried_in_the_task_is_passed_over() -> None:
    found = next_fix([BATCH, MODE], job(), tried=[fix_key(BATCH)])
    assert found is not None and found[0] == MODE
    assert next_fix([BATCH, MODE], job(), tried=[fix_key(BATCH), fix_key(MODE)]) is None


def test_a_number_on_the_same_side_of_the_fix_takes_it_one_on_the_other_side_does_not() -> None:
    change = applied_change(BATCH, job(batch_size=32))  # 32 is above 8, like 64 was
    assert change is not None and (change.old_value, change.new_value) == (32, 8)
    assert applied_change(BATCH, job(batch_size=4)) is None  # already below the fix's value
    assert applied_change(BATCH, job(batch_size=8)) is None  # already there


def test_a_text_value_must_be_the_one_the_fix_started_from() -> None:
    assert applied_change(MODE, job(mode="exact")) is not None
    assert applied_change(MODE, job(mode="approximate")) is None


def test_fields_patches_may_not_touch_never_apply() -> None:
    assert applied_change(fix("code", "a", "b"), job()) is None
    assert applied_change(fix("resources.gpu", 0, 1), job()) is None


def test_a_resource_fix_applies_to_the_job_resources() -> None:
    change = applied_change(TIMEOUT, job())
    assert change is not None and (change.old_value, change.new_value) == (60.0, 30.0)


# --- learning --------------------------------------------------------------------------------


def test_a_fix_that_cured_moves_to_the_front_and_its_misses_reset() -> None:
    memory, misses = remembered([MODE, TIMEOUT, BATCH], {fix_key(BATCH): 2},
                                [tried(BATCH, "cured")])
    assert memory == [BATCH, MODE, TIMEOUT]
    assert misses == {}


def test_a_miss_moves_a_fix_one_place_down_and_is_counted() -> None:
    memory, misses = remembered([MODE, TIMEOUT, BATCH], {}, [tried(MODE, "failed")])
    assert memory == [TIMEOUT, MODE, BATCH]
    assert misses == {fix_key(MODE): 1}
    memory, misses = remembered(memory, misses, [tried(MODE, "refused")])
    assert memory == [TIMEOUT, BATCH, MODE]
    assert misses == {fix_key(MODE): 2}


def test_a_fix_that_missed_drop_after_times_in_a_row_is_forgotten() -> None:
    memory, misses = remembered([MODE, BATCH], {fix_key(MODE): DROP_AFTER - 1},
                                [tried(MODE, "failed")])
    assert memory == [BATCH]
    assert misses == {}


def test_a_cure_in_between_starts_the_count_again() -> None:
    memory, misses = remembered([MODE, BATCH], {fix_key(MODE): DROP_AFTER - 1},
                                [tried(MODE, "cured")])
    memory, misses = remembered(memory, misses, [tried(MODE, "failed")])
    assert MODE in memory and misses == {fix_key(MODE): 1}


def test_tries_apply_in_order_a_miss_then_a_cure() -> None:
    memory, misses = remembered([MODE, BATCH, TIMEOUT], {},
                                [tried(MODE, "failed"), tried(TIMEOUT, "cured")])
    assert memory == [TIMEOUT, BATCH, MODE]
    assert misses == {fix_key(MODE): 1}


def test_an_untested_try_changes_nothing() -> None:
    assert remembered([MODE, BATCH], {}, [tried(MODE, "applied")]) == ([MODE, BATCH], {})


def test_a_cure_outside_the_memory_joins_it_first_and_the_list_stays_bounded() -> None:
    memory = [fix("args.n", i + 100, i) for i in range(MEMORY_LIMIT)]
    rule = fix("args.batch_size", 64, 32, "halve batch_size")
    updated, _ = remembered(memory, {}, [tried(memory[0], "failed")], cures=[rule])
    assert updated[0] == rule
    assert len(updated) == MEMORY_LIMIT
    assert memory[-1] not in updated  # the last one made room
    assert updated[1:3] == [memory[1], memory[0]]  # the miss moved one place down


def test_a_cure_already_remembered_is_moved_not_repeated() -> None:
    again = fix("args.batch_size", 32, 8, "halve batch_size")  # same field and value as BATCH
    updated, _ = remembered([MODE, BATCH], {fix_key(BATCH): 1}, [], cures=[again])
    assert updated == [again, MODE]


def test_cures_are_the_changes_outside_the_memory_of_a_completed_task_only() -> None:
    rule = fix("args.batch_size", 8, 4)
    fixes = [fix("args.mode", "exact", "fast"), rule]  # the first one the memory's MODE
    assert cures_of(fixes, [tried(MODE, "failed")], completed=True) == [rule]
    assert cures_of(fixes, [tried(MODE, "failed")], completed=False) == []
