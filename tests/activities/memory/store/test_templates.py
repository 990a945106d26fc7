"""The templates part of MemoryStore: job specs counted by clean success, then cached."""

from __future__ import annotations

import asyncio

from activities.memory.store import MemoryStore, job_checksum, template_id
from tests.activities.memory.store.support import T0, TYPE, db, sql
from workflows.contracts.plan import JobSpec


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
