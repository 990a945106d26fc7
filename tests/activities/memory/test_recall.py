"""``recall_memory`` on real PostgreSQL: the rules and failures that apply to a goal, as notes.

Memory learns the usual way (``remember_task``: a rule at the third task fixed alike); the
planner of a goal about the same kind of work is told the rule, and of failures no rule covers
yet; an unrelated goal is told nothing; the notes are bounded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from activities.memory.memory import Memory
from activities.memory.recall import Recall, applies, topic_stems
from activities.memory.store import MemoryStore
from tests.activities.memory.test_memory import ACTION, KIND, OOM_RULE, T0, fixed
from workflows.contracts.kinds import named_families
from workflows.contracts.memory import AttemptRecord, RememberInput
from workflows.contracts.recall import NOTE_CHARS, RecallInput

pytestmark = pytest.mark.integration
GOAL = "Train a classifier on the full data set and report its accuracy"


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[MemoryStore]:
    async with MemoryStore(fresh_database_url) as opened:
        yield opened


def failed(run: str, action: str, cause: str, minute: int = 0) -> RememberInput:
    """A task that failed once with ``cause`` and never completed."""
    attempt = AttemptRecord(phase="execution", attempt=1, root_cause=cause)
    return RememberInput(run_id=run, task_id="t1", action=action, status="failed",
                         finished_at=T0 + timedelta(minutes=minute), failures=[attempt],
                         attempts=1)


async def test_a_goal_is_told_the_rules_and_failures_of_its_kind_of_work(
        store: MemoryStore) -> None:
    memory = Memory(store)
    for n in (1, 2, 3):  # three tasks fixed alike: the out-of-memory rule is promoted
        await memory.remember_task(fixed(f"run-{n}", minute=n))
    await memory.remember_task(failed("run-4", ACTION, "import_error", minute=4))
    await memory.remember_task(failed("run-5", "Render the poster of the talk", "timeout"))

    answer = await Recall(store).recall_memory(RecallInput(run_id="r", goal=GOAL))
    assert answer.rules == [OOM_RULE] and answer.task_types == [KIND]
    rule, failure = answer.notes
    assert rule.startswith(f"rule {OOM_RULE} for tasks like '{KIND}' (confidence ")
    assert "args.batch_size" in rule and "Fix that worked:" in rule
    assert failure == (f"tasks like '{KIND}' failed 1 time with root cause import_error: "
                       "0 fixed, 1 not.")  # the out-of-memory failures are the rule's
    assert all("poster" not in n for n in answer.notes)

    unrelated = await Recall(store).recall_memory(RecallInput(
        run_id="r", goal="Does the poster render?"))
    assert unrelated.rules == [] and unrelated.notes == [
        "tasks like 'task.poster-render-talk:-|-|-' failed 1 time with root cause timeout: "
        "0 fixed, 1 not."]
    topical = await Recall(store).recall_memory(RecallInput(
        run_id="r", goal="Is it fast?", topics=["the classifier trains on the full data"]))
    assert topical.rules == [OOM_RULE]


async def test_notes_are_bounded_in_number_and_length(store: MemoryStore) -> None:
    memory = Memory(store)
    long_cause = "cause_" + "x" * 2000
    for n in range(6):
        await memory.remember_task(failed(f"run-{n}", ACTION, f"{long_cause}{n}", minute=n))
    answer = await Recall(store).recall_memory(RecallInput(run_id="r", goal=GOAL,
                                                           max_notes=4))
    assert len(answer.notes) == 4
    assert all(len(n) <= NOTE_CHARS for n in answer.notes)
    assert all(n.endswith(" more]") for n in answer.notes)  # each says it was cut


async def test_memory_switched_off_recalls_nothing() -> None:
    answer = await Recall(None).recall_memory(RecallInput(run_id="r", goal=GOAL))
    assert answer.notes == [] and answer.rules == []


def test_a_task_type_applies_when_half_its_words_and_two_are_the_goals() -> None:
    stems = topic_stems([GOAL])
    assert applies("train-classifier-full-data-set", stems) == 1.0
    assert applies("train-regressor-small-sample-set", stems) == 0.0  # 2 of 5: too few
    assert applies("train-regressor", stems) == 0.0  # 1 of 2: half, but not two words
    assert applies("classifier-accuracy-poster", stems) == pytest.approx(0.6667)
    assert applies("report", stems) == 1.0  # a one-word type needs its only word


def test_a_kind_applies_when_the_goal_names_its_analysis() -> None:
    goal = "Which regression explains house prices best?"
    stems, families = topic_stems([goal]), named_families(goal)
    assert applies("regression.lasso+interactions:sklearn|csv|r2", stems, families) == 1.0
    assert applies("test.t:scipy|csv|p", stems, families) == 0.0
    assert applies("task.poster-render-talk:-|-|-", topic_stems(["Render the poster"])) \
        == pytest.approx(0.6667)  # "task" is no topic word
