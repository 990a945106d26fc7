"""SkillStore on real PostgreSQL: adding, reading, status moves, statistics, sync and audit."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from skills.store import (
    SkillExists,
    SkillInvalid,
    SkillNotFound,
    SkillStatusError,
    SkillStore,
    SkillStoreUnavailable,
    SkillUnreadable,
)
from workflows.library.patterns import (
    FLAG_AFTER_DEVIATIONS,
    Deviation,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
)

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[SkillStore]:
    async with SkillStore(fresh_database_url) as opened:
        yield opened


def make_skill(name: str = "csv-profile", version: int = 1, *, status: str = "candidate",
               description: str = "Profile the columns of a CSV table", **extra: Any) -> Skill:
    pattern = SkillPattern(
        name=name, version=version, description=description,
        context="summary statistics of every column of a table",
        parameters=[SkillParameter(name="data", type="file_path", target="input",
                                   extensions=["csv"]),
                    SkillParameter(name="bins", type="integer", default=10, minimum=1,
                                   maximum=100)],
        source_runs=["run-1"])
    return Skill.model_validate({"pattern": pattern, "status": status, "confidence": 0.8,
                                 **extra})


async def sql(store: SkillStore, statement: str, **params: Any) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(statement), params)


async def revision(store: SkillStore) -> int:
    return (await store.changes_since(0))[0]


async def use(store: SkillStore, skill_id: str, key: str, *, succeeded: bool = True,
              deviation: Deviation = "none", duration_s: float = 2.0, cost_usd: float = 0.01,
              at: datetime = T0) -> tuple[Skill, bool]:
    return await store.record_use(skill_id, succeeded=succeeded, duration_s=duration_s,
                                  cost_usd=cost_usd, at=at, deviation=deviation, key=key)


async def actions(store: SkillStore, skill_id: str) -> list[str]:
    return [event.action for event in await store.events(skill_id)]


# --- adding and reading --------------------------------------------------------------------


@db
async def test_open_is_idempotent_when_several_workers_open_at_once(
        fresh_database_url: str) -> None:
    stores = [SkillStore(fresh_database_url) for _ in range(4)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        await stores[0].open()
        await stores[1].add(make_skill(), by="ada")
        assert [s.skill_id for s in await stores[2].list()] == ["csv-profile@v1"]
    finally:
        await asyncio.gather(*(s.close() for s in stores))


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


# --- status --------------------------------------------------------------------------------


@db
async def test_allowed_status_moves_are_made_and_audited(store: SkillStore) -> None:
    await store.add_many([make_skill("alpha"), make_skill("beta")], by="extractor")

    approved = await store.set_status("alpha@v1", "active", by="ada")
    assert (approved.status, approved.note) == ("active", "approved by ada")
    flagged = await store.set_status("alpha@v1", "candidate", by="bob", note="looks wrong")
    assert (flagged.status, flagged.note) == ("candidate", "looks wrong")
    retired = await store.set_status("alpha@v1", "retired", by="ada")
    assert (retired.status, retired.note) == ("retired", "retired by ada")
    revived = await store.set_status("alpha@v1", "candidate", by="ada")
    assert (revived.status, revived.note) == ("candidate", "revived by ada")
    assert await actions(store, "alpha@v1") == ["created", "approved", "flagged", "retired",
                                                "revived"]

    trial = await store.set_status("beta@v1", "trial", by="ada", share=0.1)
    assert (trial.status, trial.share, trial.note) == ("trial", 0.1, "approved for trial by ada")
    promoted = await store.set_status("beta@v1", "active", by="ada")
    assert (promoted.status, promoted.share) == ("active", 0.0)
    events = await store.events("beta@v1")
    assert [(e.action, e.detail.get("share")) for e in events] == [
        ("created", None), ("trial", 0.1), ("promoted", None)]
    assert events[-1].detail == {"from": "trial", "to": "active", "note": "approved by ada"}
    assert await store.get("beta@v1") == promoted


@db
@pytest.mark.parametrize(("start", "target", "share", "message"), [
    ("candidate", "candidate", None,
     "skill alpha@v1 is candidate; it can become active or trial or retired, not candidate"),
    ("trial", "candidate", None,
     "skill alpha@v1 is trial; it can become active or retired, not candidate"),
    ("active", "trial", None,
     "skill alpha@v1 is active; it can become retired or candidate, not trial"),
    ("retired", "active", None, "skill alpha@v1 is retired; it can become candidate, not active"),
    ("candidate", "done", None, "unknown status 'done': use one of candidate, active, trial, "
                                "retired"),
    ("candidate", "trial", None, "a trial of alpha@v1 needs a share of matching tasks above 0 "
                                 "and at most 1 (e.g. 0.1), not 0"),
    ("candidate", "trial", 1.5, "needs a share of matching tasks above 0 and at most 1"),
])
async def test_refused_status_moves_say_what_is_allowed_and_change_nothing(
        store: SkillStore, start: str, target: str, share: float | None, message: str) -> None:
    extra: dict[str, Any] = {"share": 0.2} if start == "trial" else {}
    await store.add(make_skill("alpha", status=start, **extra), by="ada")
    before, rev = await store.get("alpha@v1"), await revision(store)
    with pytest.raises(SkillStatusError) as err:
        await store.set_status("alpha@v1", target, by="ada", share=share)
    assert message in str(err.value)
    assert await store.get("alpha@v1") == before
    assert await revision(store) == rev
    assert await actions(store, "alpha@v1") == ["created"]


@db
async def test_moving_an_unknown_skill_is_refused(store: SkillStore) -> None:
    with pytest.raises(SkillNotFound, match="no skill 'alpha@v1'"):
        await store.set_status("alpha@v1", "active", by="ada")


@db
async def test_approving_a_version_retires_the_familys_previous_active(
        store: SkillStore) -> None:
    await store.add_many([make_skill("csv-profile", 1, status="active"),
                          make_skill("csv-profile", 2),
                          make_skill("csv-profile", 3, status="trial", share=0.1),
                          make_skill("train-model", 1, status="active")], by="extractor")
    await store.set_status("csv-profile@v2", "active", by="ada")

    statuses = {s.skill_id: (s.status, s.note) for s in await store.list()}
    assert statuses == {
        "csv-profile@v1": ("retired", "replaced by csv-profile@v2"),
        "csv-profile@v2": ("active", "approved by ada"),
        "csv-profile@v3": ("trial", ""),
        "train-model@v1": ("active", "")}
    old = await store.events("csv-profile@v1")
    assert (old[-1].action, old[-1].by, old[-1].detail["replaced_by"]) == (
        "retired", "ada", "csv-profile@v2")

    await store.set_status("csv-profile@v3", "active", by="ada")
    assert [s.skill_id for s in await store.list(["active"])] == [
        "csv-profile@v3", "train-model@v1"]


# --- statistics ----------------------------------------------------------------------------


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
async def test_save_replaces_a_skill_and_save_many_is_all_or_nothing(store: SkillStore) -> None:
    await store.add_many([make_skill("alpha", status="active"), make_skill("beta")], by="ada")
    alpha = await store.get("alpha@v1")
    changed = alpha.model_copy(update={
        "pattern": alpha.pattern.model_copy(update={"description": "Profile better"}),
        "metrics": SkillMetrics(retrieved=4, used=3, succeeded=2)})
    saved = await store.save(changed, by="skill-library", action="merged",
                             detail={"absorbed": "beta@v1"})
    assert saved.created_at == alpha.created_at and saved.updated_at != alpha.updated_at
    assert await store.get("alpha@v1") == saved
    assert saved.pattern.description == "Profile better" and saved.metrics.used == 3
    assert (await store.events("alpha@v1"))[-1].detail == {"absorbed": "beta@v1"}

    before = await store.list()
    beta = (await store.get("beta@v1")).model_copy(update={"status": "retired"})
    with pytest.raises(SkillNotFound, match="no skill 'gamma@v1'"):
        await store.save_many([beta, make_skill("gamma")], by="skill-library",
                              action="merged")
    with pytest.raises(SkillInvalid, match="skill beta@v1 is given twice"):
        await store.save_many([beta, beta], by="skill-library", action="merged")
    assert await store.list() == before
    merged = await store.save_many([saved, beta], by="skill-library", action="merged")
    assert [s.status for s in merged] == ["active", "retired"]
    assert (await store.get("beta@v1")).status == "retired"


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


async def test_an_unreachable_database_is_explained() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    store = SkillStore(f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/assay")
    with pytest.raises(SkillStoreUnavailable) as err:
        await store.open()
    await store.close()
    message = str(err.value)
    assert message.startswith("cannot open the skill library at "
                              "postgresql+asyncpg://ada:***@127.0.0.1")
    assert "assay up" in message and "secret" not in message


@db
async def test_the_audit_trail_refuses_changes(store: SkillStore) -> None:
    await store.add(make_skill(), by="ada")
    for statement in ("UPDATE skill_events SET by = 'mallory'", "DELETE FROM skill_events",
                      "TRUNCATE skill_events"):
        with pytest.raises(DBAPIError, match="skill_events is append-only"):
            await sql(store, statement)
    assert [(e.by, e.action) for e in await store.events("csv-profile@v1")] == [
        ("ada", "created")]
