"""Counting uses: once per task, flagged after major deviations, exact under concurrency."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from skills.store import SkillNotFound, SkillStore
from tests.skills.store.support import T0, actions, db, make_skill, use
from workflows.contracts.patterns import Deviation
from workflows.library.formulas import FLAG_AFTER_DEVIATIONS


@db
async def test_record_use_counts_a_key_once(store: SkillStore) -> None:
    await store.add(make_skill(status="active"), by="ada")
    first, flagged = await use(store, "csv-profile@v1", "run-1/a", duration_s=3.0,
                               cost_usd=0.02, at=T0)
    assert not flagged
    again, flagged = await use(store, "csv-profile@v1", "run-1/a", duration_s=9.0,
                               succeeded=False, at=T0 + timedelta(hours=1))
    assert not flagged and again == first
    await use(store, "csv-profile@v1", "run-2/a", succeeded=False, duration_s=1.0,
              cost_usd=0.04, at=T0 - timedelta(hours=1))

    m = (await store.get("csv-profile@v1")).metrics
    assert (m.used, m.succeeded, m.total_duration_s, m.total_cost_usd) == (2, 1, 4.0, 0.06)
    assert m.last_used == T0, "an older use recorded late does not move last_used back"
    assert (m.mean_duration_s, m.success_rate) == (2.0, 0.5)
    assert await actions(store, "csv-profile@v1") == ["created", "used", "used"]
    event = (await store.events("csv-profile@v1"))[1]
    assert (event.by, event.detail) == ("skill-library", {
        "key": "run-1/a", "succeeded": True, "deviation": "none", "duration_s": 3.0,
        "cost_usd": 0.02})



@db
async def test_major_deviations_in_a_row_flag_an_active_skill_for_review(
        store: SkillStore) -> None:
    await store.add(make_skill(status="active"), by="ada")
    outcomes: list[Deviation] = ["major", "major", "minor", "major", "none", "major", "major"]
    for n, deviation in enumerate(outcomes):
        skill, flagged = await use(store, "csv-profile@v1", f"run-{n}/a", deviation=deviation)
        assert not flagged and skill.status == "active"
    assert (await store.get("csv-profile@v1")).metrics.deviations == 2

    skill, flagged = await use(store, "csv-profile@v1", "run-9/a", deviation="major")
    assert flagged
    assert (skill.status, skill.metrics.deviations) == ("candidate", FLAG_AFTER_DEVIATIONS)
    assert skill.note == "flagged for review after 3 major deviations"
    assert await store.get("csv-profile@v1") == skill
    assert (await actions(store, "csv-profile@v1"))[-2:] == ["used", "flagged"]

    skill, flagged = await use(store, "csv-profile@v1", "run-10/a", deviation="major")
    assert not flagged and skill.status == "candidate", "a candidate is not flagged again"
    approved = await store.set_status("csv-profile@v1", "active", by="ada")
    assert approved.metrics.deviations == 0, "a person's approval starts the count afresh"



@db
async def test_a_trial_version_is_not_flagged(store: SkillStore) -> None:
    await store.add(make_skill(status="trial", share=0.5), by="ada")
    for n in range(FLAG_AFTER_DEVIATIONS + 1):
        skill, flagged = await use(store, "csv-profile@v1", f"run-{n}/a", deviation="major")
        assert not flagged and skill.status == "trial"



@db
async def test_concurrent_uses_from_several_workers_add_up_exactly(
        fresh_database_url: str) -> None:
    stores = [SkillStore(fresh_database_url) for _ in range(3)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        await stores[0].add(make_skill(status="active"), by="ada")
        keys = [f"run-{n}/a" for n in range(40)]
        calls = [use(stores[n % 3], "csv-profile@v1", key, succeeded=n % 4 != 0,
                     duration_s=0.5, cost_usd=0.25)
                 for n, key in enumerate([*keys, *keys[:10]])]
        await asyncio.gather(*calls)
        m = (await stores[1].get("csv-profile@v1")).metrics
        assert (m.used, m.succeeded, m.total_duration_s, m.total_cost_usd) == (
            40, 30, 20.0, 10.0)
        assert (await actions(stores[2], "csv-profile@v1")).count("used") == 40
    finally:
        await asyncio.gather(*(s.close() for s in stores))



@db
async def test_bad_use_input_is_refused_and_leaves_the_key_unused(store: SkillStore) -> None:
    await store.add(make_skill(status="active"), by="ada")
    for kwargs, message in [({"key": " "}, "the key (run_id/task_id) is empty"),
                            ({"duration_s": float("nan")}, "duration_s must be a finite"),
                            ({"cost_usd": -1.0}, "cost_usd must be a finite number of at "
                                                 "least 0, not -1.0")]:
        args: dict[str, Any] = {"key": "run-1/a", **kwargs}
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            await use(store, "csv-profile@v1", **args)
    with pytest.raises(ValueError, match="unknown deviation 'huge'"):
        await store.record_use("csv-profile@v1", succeeded=True, duration_s=1, cost_usd=0,
                               at=T0, deviation="huge", key="run-1/a")  # pyright: ignore[reportArgumentType]
    with pytest.raises(SkillNotFound, match="did you mean csv-profile@v1"):
        await use(store, "csv-profile@v2", "run-1/a")
    skill, _ = await use(store, "csv-profile@v1", "run-1/a")
    assert skill.metrics.used == 1, "the refused calls did not consume the key"



@db
async def test_count_retrieved_adds_one_per_retrieval_in_one_statement(
        store: SkillStore) -> None:
    await store.add_many([make_skill("alpha"), make_skill("beta"), make_skill("gamma")],
                         by="ada")
    await store.count_retrieved(["alpha@v1", "alpha@v1", "beta@v1", "nothing@v1"])
    await store.count_retrieved([])
    await store.count_retrieved(["beta@v1"])
    counts = {s.skill_id: s.metrics.retrieved for s in await store.list()}
    assert counts == {"alpha@v1": 2, "beta@v1": 2, "gamma@v1": 0}
