"""The episodes part of MemoryStore: stored once, read newest first, pruned."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from activities.memory.store import MemoryStore
from tests.activities.memory.store.support import T0, TYPE, db, sql
from workflows.contracts.memory import Episode
from workflows.contracts.reflection import PatchChange


def episode(n: int, *, task_type: str = TYPE, run: str = "run-1", task: str = "a",
            outcome: str = "failure", root_cause: str = "out_of_memory",
            at: datetime | None = None) -> Episode:
    return Episode(episode_id=f"{task_type}-{n}", recorded_at=at or T0 + timedelta(minutes=n),
                   run_id=run, task_id=task, task_type=task_type, phase="execution",
                   attempt=1, root_cause=root_cause, outcome=outcome)


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
