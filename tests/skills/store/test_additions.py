"""Adding skills: read back in order, all or nothing, checked first, seeded once."""

from __future__ import annotations

import asyncio

import pytest

from skills.store import SkillExists, SkillInvalid, SkillStore
from tests.skills.store.support import T0, actions, db, make_skill, revision
from workflows.contracts.patterns import SkillParameter


@db
async def test_added_skills_are_read_back_listed_in_order_and_grouped_by_family(
        store: SkillStore) -> None:
    added = await store.add(make_skill("csv-profile", 2, status="active"), by="ada")
    await store.add(make_skill("train-model", 1), by="ada")
    await store.add(make_skill("csv-profile", 1, status="retired"), by="ada")

    got = await store.get("csv-profile@v2")
    assert got == added
    assert got.pattern.parameter("bins") == SkillParameter(
        name="bins", type="integer", default=10, minimum=1, maximum=100)
    assert got.created_at is not None and got.created_at == got.updated_at
    assert [s.skill_id for s in await store.list()] == [
        "csv-profile@v1", "csv-profile@v2", "train-model@v1"]
    assert [s.skill_id for s in await store.list(["active", "candidate"])] == [
        "csv-profile@v2", "train-model@v1"]
    assert [s.skill_id for s in await store.list(name="csv-profile")] == [
        "csv-profile@v1", "csv-profile@v2"]
    assert [s.skill_id for s in await store.family("csv-profile")] == [
        "csv-profile@v1", "csv-profile@v2"]
    assert await store.family("nothing") == []
    assert await actions(store, "csv-profile@v2") == ["created"]
    event = (await store.events("csv-profile@v2"))[0]
    assert (event.by, event.detail) == ("ada", {"status": "active", "origin": "extracted"})
    with pytest.raises(ValueError, match="unknown status bogus: use candidate, active"):
        await store.list(["bogus"])



@db
async def test_a_skill_keeps_the_creation_time_it_was_given(store: SkillStore) -> None:
    added = await store.add(make_skill(created_at=T0.replace(tzinfo=None)), by="ada")
    assert added.created_at == T0
    assert (await store.get(added.skill_id)).created_at == T0



@db
async def test_adding_a_taken_id_is_refused(store: SkillStore) -> None:
    await store.add(make_skill(), by="ada")
    with pytest.raises(SkillExists, match=r"already in the library: csv-profile@v1") as err:
        await store.add(make_skill(description="another"), by="bob")
    assert err.value.skill_ids == ["csv-profile@v1"]
    assert (await store.get("csv-profile@v1")).pattern.description.startswith("Profile")



@db
async def test_add_many_is_all_or_nothing_and_names_every_conflict(store: SkillStore) -> None:
    await store.add_many([make_skill("alpha"), make_skill("beta")], by="ada")
    before = await revision(store)
    batch = [make_skill("alpha"), make_skill("gamma"), make_skill("beta"),
             make_skill("delta"), make_skill("delta")]
    with pytest.raises(SkillExists) as err:
        await store.add_many(batch, by="ada", action="imported")
    assert str(err.value) == ("no skills added; already in the library: alpha@v1, beta@v1; "
                              "given twice: delta@v1")
    assert err.value.skill_ids == ["alpha@v1", "beta@v1", "delta@v1"]
    assert [s.skill_id for s in await store.list()] == ["alpha@v1", "beta@v1"]
    assert await revision(store) == before

    added = await store.add_many([make_skill("gamma"), make_skill("delta")], by="ada",
                                 action="imported")
    assert [s.skill_id for s in added] == ["gamma@v1", "delta@v1"]
    assert await actions(store, "delta@v1") == ["imported"]



@db
async def test_invalid_skills_are_refused_with_every_problem_and_nothing_stored(
        store: SkillStore) -> None:
    nan = make_skill("nan-range")
    nan.pattern.parameters[1].maximum = float("nan")
    batch = [make_skill("Bad Name"), make_skill("nul", description="a\x00b"), nan,
             make_skill("fine")]
    with pytest.raises(SkillInvalid) as err:
        await store.add_many(batch, by="ada")
    assert err.value.problems == [
        "skill Bad Name@v1: the name 'Bad Name' must be lowercase letters, digits and single "
        "hyphens, with no hyphen at either end",
        "skill nul@v1: holds a NUL character, which PostgreSQL cannot store",
        "skill nan-range@v1: holds a number that is not finite (NaN or infinity)"]
    assert await store.list() == []
    with pytest.raises(SkillInvalid, match="holds a NUL"):
        await store.seed([make_skill("nul", description="\x00")], by="assay")



@db
async def test_seed_adds_only_names_not_yet_stored_and_is_idempotent(store: SkillStore) -> None:
    assert await store.seed([make_skill("alpha"), make_skill("beta")], by="assay") == [
        "alpha@v1", "beta@v1"]
    await store.set_status("beta@v1", "retired", by="ada")
    again = [make_skill("alpha", 2), make_skill("beta"), make_skill("gamma")]
    assert await store.seed(again, by="assay") == ["gamma@v1"]
    assert await store.seed(again, by="assay") == []
    assert [s.skill_id for s in await store.list()] == ["alpha@v1", "beta@v1", "gamma@v1"]
    assert (await store.get("beta@v1")).status == "retired", "a retired built-in stays retired"
    assert await actions(store, "gamma@v1") == ["seeded"]



@db
async def test_concurrent_seeds_store_each_skill_once(fresh_database_url: str) -> None:
    stores = [SkillStore(fresh_database_url) for _ in range(4)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        builtins = [make_skill("alpha"), make_skill("beta")]
        added = await asyncio.gather(*(s.seed(builtins, by="assay") for s in stores))
        assert sorted(skill_id for ids in added for skill_id in ids) == ["alpha@v1", "beta@v1"]
        assert len(await stores[0].list()) == 2
    finally:
        await asyncio.gather(*(s.close() for s in stores))
