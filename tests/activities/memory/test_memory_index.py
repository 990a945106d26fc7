"""Similar task types in Qdrant, and memory's advice through them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from activities.memory.index import LAYOUT, TaskTypeIndex, word_vector
from activities.memory.memory import Memory, rule_id_for
from activities.memory.store import MemoryStore
from activities.vectors import EdgeIndex
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import (
    ConsultInput,
    ConsultTask,
    MemoryRule,
    Recommendation,
)
from workflows.contracts.plan import JobSpec

TRAIN = "Train the model in batches"


@pytest.fixture(params=["client", "edge"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TaskTypeIndex]:
    """Memory's index through qdrant-client (as in the stack), or in the in-process engine."""
    if request.param == "client":
        yield TaskTypeIndex.on_client(QdrantClient(location=":memory:"))
        return
    with EdgeIndex(tmp_path / "types", LAYOUT) as vectors:
        yield TaskTypeIndex(vectors)


def test_word_vectors_are_unit_length_and_ignore_case_and_punctuation() -> None:
    indices, values = word_vector("Train, the MODEL; train!")
    assert math.isclose(sum(v * v for v in values), 1.0)
    assert (indices, values) == word_vector("train the model train")
    assert word_vector("1 2 3 !") == ([], [])


async def test_a_differently_worded_action_finds_the_known_task_kind(
        index: TaskTypeIndex) -> None:
    await index.add(task_kind(TRAIN), TRAIN)
    await index.add("describe-sample", "Describe the sample of measurements")
    await index.add(task_kind(TRAIN), TRAIN)  # idempotent: still one point per type

    (found, score), = await index.similar("Train the model in small batches")
    assert found == task_kind(TRAIN) and 0.75 <= score < 1.0
    assert await index.similar("Plot the residuals of the regression") == []
    assert await index.similar(TRAIN, exclude=task_kind(TRAIN)) == []
    assert await index.similar("") == []


async def test_consult_uses_a_similar_task_types_rule_and_says_so(
        fresh_database_url: str, index: TaskTypeIndex) -> None:
    kind = task_kind(TRAIN)
    async with MemoryStore(fresh_database_url) as store:
        await store.save_rule(MemoryRule(
            rule_id=rule_id_for(kind, "out_of_memory"), task_type=kind,
            root_cause="out_of_memory", pattern=f"{kind}: out_of_memory", observation="oom",
            recommendation=Recommendation(action="smaller batches",
                                          parameters={"args.batch_size": 16},
                                          limits={"args.batch_size": "max"}),
            occurrences=3, success_count=3, confidence=0.8,
            created_at=datetime(2026, 1, 1, tzinfo=UTC)))
        await index.add(kind, TRAIN)
        job = JobSpec(code="print(1)", args={"batch_size": 64})
        ask = ConsultInput(run_id="r", tasks=[ConsultTask(
            task_id="t", action="Train the model in small batches", job=job)])

        without_index = await Memory(store).consult_memory(ask)
        answer = await Memory(store, index=index).consult_memory(ask)
    assert without_index.advice[0].job is None  # the exact type knows nothing
    advice = answer.advice[0]
    assert advice.task_type == task_kind("Train the model in small batches")
    assert advice.similar_to == kind and advice.job is not None
    assert advice.job.args["batch_size"] == 16
    assert f"similar task type {kind}" in advice.rationale()


async def test_reflection_workers_on_one_server_share_their_task_types() -> None:
    server = QdrantClient(location=":memory:")
    first, second = TaskTypeIndex.on_client(server), TaskTypeIndex.on_client(server)
    await first.add(task_kind(TRAIN), TRAIN)
    await second.add(task_kind(TRAIN), TRAIN)  # the same type from the other worker
    (found, _), = await second.similar("Train the model in small batches")
    assert found == task_kind(TRAIN) and first.vectors.count() == 1
