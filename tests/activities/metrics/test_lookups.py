"""Memory and skill library activities count their lookups, misses, uses and successes.

The activities run as their pools run them: on an embedded PostgreSQL database of the
test's own (and the skill library's Qdrant Edge index in the test's directory).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.memory.memory import Memory
from activities.memory.recall import Recall
from activities.memory.store import MemoryStore
from activities.metrics.definitions import REGISTRY
from skills.library import SkillLibrary
from skills.store import SkillStore
from tests.activities.memory.test_memory import consult, promote, task, train_job
from tests.skills.test_skill_library import goal, means_skill, used
from workflows.contracts.recall import RecallInput

pytestmark = pytest.mark.integration


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
async def memory(fresh_database_url: str) -> AsyncIterator[Memory]:
    async with MemoryStore(fresh_database_url) as store:
        yield Memory(store)


async def test_consulting_counts_one_lookup_per_task_and_a_miss_where_memory_had_nothing(
        memory: Memory) -> None:
    lookups, misses = value("assay_memory_lookups_total", lookup="consult"), \
        value("assay_memory_misses_total", lookup="consult")
    await memory.consult_memory(consult(task(job=train_job(64))))  # nothing learned yet
    assert value("assay_memory_lookups_total", lookup="consult") == lookups + 1
    assert value("assay_memory_misses_total", lookup="consult") == misses + 1

    await promote(memory)
    answer = await memory.consult_memory(consult(task("t1", train_job(64)), task("t2")))
    assert answer.advice[0].job is not None and answer.advice[1].job is None
    assert value("assay_memory_lookups_total", lookup="consult") == lookups + 3
    assert value("assay_memory_misses_total", lookup="consult") == misses + 2


async def test_recall_counts_a_miss_when_it_has_no_note(memory: Memory) -> None:
    assert memory.store is not None
    recall = Recall(memory.store)
    ask = RecallInput(run_id="run-recall", goal="Train the classifier on the full data set",
                      max_notes=5)
    lookups, misses = value("assay_memory_lookups_total", lookup="recall"), \
        value("assay_memory_misses_total", lookup="recall")
    assert (await recall.recall_memory(ask)).notes == []
    await promote(memory)
    assert (await recall.recall_memory(ask)).notes != []
    assert value("assay_memory_lookups_total", lookup="recall") == lookups + 2
    assert value("assay_memory_misses_total", lookup="recall") == misses + 1


async def test_matching_counts_hits_and_misses_and_recording_counts_uses_and_successes(
        skill_store: SkillStore, skill_library: SkillLibrary) -> None:
    hits, misses = value("assay_skill_retrievals_total", result="hit"), \
        value("assay_skill_retrievals_total", result="miss")
    await skill_library.match_skills(goal())  # an empty library
    skill = await skill_store.add(means_skill(), by="test")
    await skill_library.match_skills(goal(run_id="run-2"))
    assert value("assay_skill_retrievals_total", result="miss") == misses + 1
    assert value("assay_skill_retrievals_total", result="hit") == hits + 1

    uses, successes = value("assay_skill_uses_total"), value("assay_skill_successes_total")
    ok, failed = used(skill.skill_id, "run-1/t1"), used(skill.skill_id, "run-2/t1",
                                                        status="failed")
    await skill_library.record_outcomes([ok, failed, ok])  # the repeated outcome counts once
    never_ran = used(skill.skill_id, "run-3/t1", status="cancelled", attempts=0)
    await skill_library.record_outcomes([never_ran])
    assert value("assay_skill_uses_total") == uses + 2
    assert value("assay_skill_successes_total") == successes + 1
