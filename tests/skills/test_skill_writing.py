"""The library's side of the skill writer: briefs, the writer's text on a pattern, undecided
merges, and ``revise_skills`` against PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skills.extract import extract
from skills.maintain import plan_maintenance
from skills.revise import SkillRevisions
from skills.store import SkillStore
from skills.writing import (
    brief,
    briefs,
    merge_problem,
    merged_by_writer,
    revised,
    writer_said,
)
from tests.skills.extract.batches import HALVE, NOW, sales_batch
from tests.skills.test_skill_maintain import skill
from workflows.contracts.patterns import Skill
from workflows.contracts.spend import Spend
from workflows.contracts.writing import (
    MergeVerdict,
    ReviseInput,
    SkillWritingOutput,
    WriteSkillAnswer,
)

WRITTEN = SkillWritingOutput(
    why_it_works="Small batches fit in memory.", when_it_fails="Batches of 64 run out of memory.",
    description="Profiles a sales table in small batches.",
    applicability="Column statistics of quarterly sales tables.", kind="skill",
    kind_reason="a stateless job")


def extracted() -> Skill:
    (made,) = extract(sales_batch(), [], now=NOW).new
    return made


def test_a_brief_shows_the_batch_cases_of_its_kind_without_code() -> None:
    made = extracted()
    (shown,) = briefs([made], sales_batch())
    assert shown.skill_id == made.skill_id and len(shown.successes) == 7
    assert len(shown.failures) == 3
    assert "batch_size=64" in shown.failures[0] and "failed" in shown.failures[0]
    assert "import pandas" not in shown.model_dump_json(), "the job's code is never shown"
    assert brief(made).successes == [], "no cases: nothing invented"


def test_the_writers_text_goes_before_the_computed_text_and_twice_changes_nothing() -> None:
    made = extracted()
    new = revised(made, WRITTEN)
    p = new.pattern
    assert p.description == WRITTEN.description
    assert p.context.startswith(WRITTEN.applicability + "\n\nComputed from the batch:\n")
    assert p.context.endswith(made.pattern.context)
    assert p.contrast.startswith("Why it works: Small batches fit in memory.\nWhen it does not:")
    assert p.contrast.endswith(made.pattern.contrast), "the computed numbers are kept"
    assert (p.job, p.parameters, p.checks) == (made.pattern.job, made.pattern.parameters,
                                               made.pattern.checks)
    assert revised(new, WRITTEN) == new


def test_a_reclassified_pattern_changes_kind_tags_and_memory() -> None:
    made = extracted()
    sub = revised(made, WRITTEN.model_copy(update={"kind": "subagent"}))
    assert sub.pattern.kind == "subagent" and "subagent" in sub.pattern.tags
    assert "skill" not in sub.pattern.tags
    with_memory = sub.model_copy(update={"pattern": sub.pattern.model_copy(
        update={"recovery": [HALVE]})})
    back = revised(with_memory, WRITTEN)
    assert back.pattern.kind == "skill" and back.pattern.recovery == []
    assert "written by the skill writer (skill: a stateless job)" in back.note


def near(sims: dict[frozenset[str], float]) -> Callable[[str, str], float]:
    def similarity(a: str, b: str) -> float:
        return sims.get(frozenset((a, b)), 0.0)
    return similarity


def test_same_shape_pairs_just_below_the_merge_similarity_are_undecided() -> None:
    a, b, c, d = skill("a"), skill("b"), skill("c", params=("other",)), skill("d")
    e, f = skill("e"), skill("f")
    ids = {s.pattern.name: s.skill_id for s in (a, b, c, d, e, f)}
    sims = {frozenset((ids["a"], ids["b"])): 0.83,   # same shape, near: undecided
            frozenset((ids["a"], ids["c"])): 0.84,   # other parameters: decided apart
            frozenset((ids["d"], ids["e"])): 0.90,   # above: merged as before
            frozenset((ids["e"], ids["f"])): 0.82}   # e is merged already
    plan = plan_maintenance([a, b, c, d, e, f], near(sims))
    assert plan.undecided == [(ids["a"], ids["b"], 0.83)]
    assert plan.merges == [(ids["d"], ids["e"])]
    assert plan_maintenance([a, b], near(sims), undecided_band=0).undecided == []
    with pytest.raises(ValueError, match="undecided_band"):
        plan_maintenance([a, b], near(sims), undecided_band=2)


def test_a_merge_the_writer_agreed_to_adds_up_and_carries_its_text() -> None:
    first, second = skill("a", 10, 5, 5), skill("b", 10, 5, 1)
    verdict = MergeVerdict(first=first.skill_id, second=second.skill_id,
                           description="One pattern.", applicability="Both cases.",
                           reason="same work")
    assert merge_problem(first, second) is None
    kept, gone = merged_by_writer(second, first, verdict)
    assert kept.skill_id == first.skill_id, "the higher utility survives"
    assert kept.pattern.description == "One pattern." and gone.status == "retired"
    assert kept.pattern.context.startswith("Both cases.")
    assert (kept.metrics.retrieved, kept.metrics.used, kept.metrics.succeeded) == (20, 10, 6)
    retired = second.model_copy(update={"status": "retired"})
    assert merge_problem(first, retired) == f"{second.skill_id} is retired now"
    other = skill("c", params=("x",))
    assert "parameters differ" in (merge_problem(first, other) or "")


async def test_revise_skills_writes_merges_and_skips_what_no_longer_fits(
        store: SkillStore) -> None:
    made = extracted()
    a, b, c = skill("a", 10, 5, 5), skill("b", 10, 5, 1), skill("c", params=("x",))
    await store.add_many([made, a, b, c], by="test")
    written = WriteSkillAnswer(skill_id=made.skill_id, writing=WRITTEN,
                               spend=Spend(role="skill_writer"))
    verdicts = [MergeVerdict(first=a.skill_id, second=b.skill_id, description="One.",
                             applicability="Both."),
                MergeVerdict(first=a.skill_id, second=c.skill_id, description="One.",
                             applicability="Both.")]
    revisions = SkillRevisions(store)
    answer = await revisions.revise_skills(ReviseInput(writings=[written], merges=verdicts))
    assert answer.written == [made.skill_id] and answer.merged == {b.skill_id: a.skill_id}
    assert len(answer.skipped) == 1 and "parameters differ" in answer.skipped[0]
    stored = await store.get(made.skill_id)
    assert stored.pattern.description == WRITTEN.description
    assert [e.action for e in await store.events(made.skill_id)][-1] == "written"
    assert (await store.get(b.skill_id)).status == "retired"
    again = await revisions.revise_skills(ReviseInput(writings=[written]))
    assert again.written == [made.skill_id]
    assert [e.action for e in await store.events(made.skill_id)].count("written") == 1
    assert (await SkillRevisions(None).revise_skills(ReviseInput())).skipped


def test_what_the_writer_said_is_read_back_for_skills_written_before_the_trail_kept_it() -> None:
    written = revised(extracted(), WRITTEN)
    said = dict(writer_said(written.pattern, {"kind": "skill"}))  # an older event: kind only
    assert said["writer explains"] == WRITTEN.why_it_works
    assert said["writer warns"] == WRITTEN.when_it_fails
    assert said["grouped"].startswith("Task type: profile:sklearn|csv+txt|mean+rows. Grouped "
                                      "from 7 successful and 3 failed tasks because they share")
    assert writer_said(extracted().pattern.model_copy(update={"context": ""}), None) == []
