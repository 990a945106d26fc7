"""Reading skills: unknown ids answered with close ones, changes since a revision, bad rows."""

from __future__ import annotations

import logging

import pytest

from skills.store import SkillNotFound, SkillStore, SkillUnreadable
from tests.skills.store.support import db, make_skill, revision, sql, use


@db
async def test_an_unknown_id_is_refused_with_close_ids_suggested(store: SkillStore) -> None:
    await store.add_many([make_skill("csv-profile"), make_skill("csv-profile", 2),
                          make_skill("train-model")], by="ada")
    with pytest.raises(SkillNotFound) as err:
        await store.get("csv-profil@v2")
    assert str(err.value) == ("no skill 'csv-profil@v2'; did you mean csv-profile@v2, "
                              "csv-profile@v1? (`assay skills list --all` lists them)")
    with pytest.raises(SkillNotFound, match=r"^no skill 'zzz' \(`assay skills list"):
        await store.get("zzz")
    with pytest.raises(SkillNotFound, match="did you mean train-model@v1"):
        await store.events("train-model")



@db
async def test_changes_since_returns_each_write_once_in_order(store: SkillStore) -> None:
    assert await store.changes_since(0) == (0, [])
    await store.add_many([make_skill("alpha"), make_skill("beta")], by="ada")
    rev, changed = await store.changes_since(0)
    assert [s.skill_id for s in changed] == ["alpha@v1", "beta@v1"]
    assert await store.changes_since(rev) == (rev, [])

    await store.count_retrieved(["beta@v1"])
    rev2, changed = await store.changes_since(rev)
    assert rev2 > rev and [(s.skill_id, s.metrics.retrieved) for s in changed] == [
        ("beta@v1", 1)]
    await store.set_status("alpha@v1", "active", by="ada")
    await use(store, "alpha@v1", "run-1/a")
    rev3, changed = await store.changes_since(rev2)
    assert [s.skill_id for s in changed] == ["alpha@v1"], "one row however often written"
    assert changed[0].metrics.used == 1 and rev3 > rev2



@db
async def test_unparsable_rows_are_reported_not_fatal(store: SkillStore,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    await store.add_many([make_skill("alpha"), make_skill("beta"), make_skill("gamma"),
                          make_skill("delta")], by="ada")
    rev = await revision(store)
    await sql(store, "UPDATE skills SET status = 'bogus', revision = nextval('skill_revision')"
                     " WHERE skill_id = 'beta@v1'")
    await sql(store, """UPDATE skills SET pattern = '{"name": 7}' WHERE skill_id = 'gamma@v1'""")
    await sql(store, "UPDATE skills SET pattern = (SELECT pattern FROM skills WHERE skill_id = "
                     "'alpha@v1') WHERE skill_id = 'delta@v1'")

    skills, problems = await store.scan()
    assert [s.skill_id for s in skills] == ["alpha@v1"]
    assert problems[0].startswith("skill beta@v1 is unreadable: status: Input should be "
                                  "'candidate', 'active', 'trial' or 'retired'")
    assert problems[1] == "skill delta@v1 is unreadable: its pattern is alpha@v1"
    assert problems[2].startswith("skill gamma@v1 is unreadable: pattern.name: Input should "
                                  "be a valid string")
    assert (await store.scan(["active"])) == ([], problems[:1]), \
        "a row of no known status is reported whatever statuses are asked for"
    with caplog.at_level(logging.WARNING, logger="skills.store"):
        assert [s.skill_id for s in await store.list()] == ["alpha@v1"]
    assert [r.getMessage() for r in caplog.records] == problems
    with pytest.raises(SkillUnreadable, match="skill gamma@v1 is unreadable"):
        await store.get("gamma@v1")
    with pytest.raises(SkillUnreadable, match="skill beta@v1 is unreadable"):
        await use(store, "beta@v1", "run-1/a")
    rev2, changed = await store.changes_since(rev)
    assert rev2 > rev and changed == [], "an unreadable row is skipped, its revision counted"
