"""Memory's task types in the in-process engine: the same answers as local mode, carried over."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from activities.memory.index import COLLECTION, SHARD, VECTOR, TaskTypeIndex, word_vector
from activities.vectors import Query, Sparse
from tests.data.skills.library import make_library
from tests.support.local_mode import as_local_mode_answered, by_name_in_ties, write_local_mode
from workflows.contracts.kinds import task_kind

ACTIONS = [skill.pattern.description for skill in make_library(1000)]
KNOWN = ACTIONS[:600]
ASKED = ACTIONS[500:] + [action.replace("the ", "") for action in ACTIONS[:300]]


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Local mode's storage holding 600 task types (made once: it takes a while)."""
    storage = tmp_path_factory.mktemp("qdrant")
    write_local_mode(storage, KNOWN)
    return storage


async def test_the_shard_answers_what_local_mode_answered_on_the_same_data(
        legacy: Path, tmp_path: Path) -> None:
    """Same types, same scores, same order; exact ties, which local mode left to numpy's
    unstable sort, come by name, and which of them a limit of five keeps, too."""
    new = TaskTypeIndex.in_directory(legacy)  # carries the points over, then lets go
    client = QdrantClient(path=str(legacy))
    old = TaskTypeIndex.on_client(client)
    same = tied = 0
    try:
        for action in ASKED:
            for min_score in (0.75, 0.0):
                before = as_local_mode_answered(old, action, min_score)
                after = await new.similar(action, min_score=min_score)
                by_name = by_name_in_ties(before)
                if after == before:
                    same += 1
                elif after == by_name:
                    tied += 1
                else:  # five of more than five equals: the same scores, the first by name
                    assert [s for _, s in after] == [s for _, s in by_name], action
    finally:
        client.close()
        new.close()
    assert same > 0.75 * 2 * len(ASKED) and tied > 0


async def test_a_score_exactly_at_the_threshold_still_passes_it(legacy: Path) -> None:
    """The engine scores in single precision (just under 0.75 here); the answer does not."""
    asked = "Detect unusual temperature values in the sensor Excel workbook for each year."
    kind = "task.find-temperatur-unusual-valu:-|-|-"
    index = TaskTypeIndex.in_directory(legacy)
    try:
        (raw,) = index.vectors.query([Query(nearest=[(VECTOR, Sparse(*word_vector(asked)))],
                                            limit=5)])
        found = await index.similar(asked)
    finally:
        index.close()
    assert next(p.score for p in raw if p.payload["task_type"] == kind) < 0.75
    assert (kind, 0.75) in found


async def test_local_modes_task_types_are_carried_over_once(tmp_path: Path) -> None:
    train, describe = "Train the model in batches", "Describe the sample of measurements"
    write_local_mode(tmp_path, [train, describe])
    first = TaskTypeIndex.in_directory(tmp_path)
    assert first.vectors.count() == 2
    (found, score), = await first.similar("Train the model in small batches")
    assert found == task_kind(train) and score == 0.9129
    await first.add("plot", "Plot the residuals")
    first.close()
    write_local_mode(tmp_path, ["Fit a curve to the points"])  # after the carry-over: not carried
    again = TaskTypeIndex.in_directory(tmp_path)
    assert again.vectors.count() == 3
    assert [kind for kind, _ in await again.similar("Plot the residuals")] == ["plot"]
    again.close()
    assert (tmp_path / "collection" / COLLECTION).is_dir(), "the old storage is left as it was"


def test_a_new_data_directory_opens_an_empty_shard(tmp_path: Path) -> None:
    index = TaskTypeIndex.in_directory(tmp_path / "qdrant")
    assert index.vectors.count() == 0 and (tmp_path / "qdrant" / SHARD).is_dir()
    index.close()


async def test_old_storage_held_elsewhere_leaves_no_shard_and_is_carried_next_time(
        tmp_path: Path) -> None:
    write_local_mode(tmp_path, ["Train the model in batches"])
    holder = QdrantClient(path=str(tmp_path))  # another process's, in effect
    try:
        with pytest.raises(RuntimeError, match=r"carried over: pid \d+ holds .*; stop it"):
            TaskTypeIndex.in_directory(tmp_path)
    finally:
        holder.close()
    assert not (tmp_path / SHARD).exists()
    index = TaskTypeIndex.in_directory(tmp_path)
    assert index.vectors.count() == 1
    index.close()


def test_damaged_old_storage_says_what_to_remove(tmp_path: Path) -> None:
    write_local_mode(tmp_path, ["Train the model in batches"])
    (tmp_path / "collection" / COLLECTION / "storage.sqlite").write_bytes(b"not a database")
    where = tmp_path / "collection" / COLLECTION
    with pytest.raises(RuntimeError, match=re.escape(f"remove {where}")):
        TaskTypeIndex.in_directory(tmp_path)
    assert not (tmp_path / SHARD).exists()


def test_a_shard_open_elsewhere_is_refused_with_the_reason(tmp_path: Path) -> None:
    index = TaskTypeIndex.in_directory(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="open in another index or process"):
            TaskTypeIndex.in_directory(tmp_path)
    finally:
        index.close()


@pytest.mark.parametrize("query", [
    "", "!!! ??? ...", "\x00\x01 train \x00 model", "Train the model " * 50_000,
    "Entraîner le modèle 学习 🚀 train model", "'; DROP TABLE memory_rules; --", ".*(a+)+$",
])
async def test_malformed_or_hostile_queries_answer_plainly(tmp_path: Path, query: str) -> None:
    index = TaskTypeIndex.in_directory(tmp_path)
    try:
        await index.add("train", "Train the model in batches")
        found = await index.similar(query, min_score=0.0)
    finally:
        index.close()
    assert all(kind == "train" and 0.0 <= score <= 1.0 for kind, score in found)
    assert bool(found) == ("train" in query.lower() or "model" in query.lower())
