"""Changing skills: status moves made and audited or refused, saves, an append-only audit."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import DBAPIError

from skills.store import SkillInvalid, SkillNotFound, SkillStatusError, SkillStore
from tests.skills.store.support import actions, db, make_skill, revision, sql
from workflows.contracts.patterns import SkillMetrics


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
async def test_the_audit_trail_refuses_changes(store: SkillStore) -> None:
    await store.add(make_skill(), by="ada")
    for statement in ("UPDATE skill_events SET by = 'mallory'", "DELETE FROM skill_events",
                      "TRUNCATE skill_events"):
        with pytest.raises(DBAPIError, match="skill_events is append-only"):
            await sql(store, statement)
    assert [(e.by, e.action) for e in await store.events("csv-profile@v1")] == [
        ("ada", "created")]
