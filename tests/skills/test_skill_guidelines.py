"""Guideline skills in the library: offered at a match, their use counted after the task.

On real PostgreSQL and a real Qdrant Edge index, with a guideline imported from a foreign
Agent Skills folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.agents.guidance import StoredGuidelines
from skills.folders.read import read_skills
from skills.library import SkillLibrary
from skills.store import SkillStore
from tests.skills.guideline_samples import NAME, guideline_folder
from workflows.contracts.patterns import Skill, SkillPattern
from workflows.contracts.plan import JobSpec
from workflows.contracts.skills import MatchInput, MatchTask, TaskOutcome
from workflows.library.formulas import utility

pytestmark = pytest.mark.integration
ACTION = "Compare the mean value of group a and group b of the measurements and give a p value"


async def imported(store: SkillStore, tmp_path: Path) -> Skill:
    report = read_skills(guideline_folder(tmp_path / "folders"), status="active")
    (skill,) = report.skills
    assert skill.pattern.job is None and skill.pattern.references
    return await store.add(skill, by="test")


def task_match(action: str = ACTION) -> MatchInput:
    return MatchInput(run_id="run-1", data_names=["measurements.csv"], tasks=[
        MatchTask(task_id="compare", action=action, has_job=False,
                  input_names=["measurements.csv"])])


WELCH = ("import json\nimport statistics\n"
         "a, b = [1.0, 2.0, 3.0], [2.0, 3.0, 5.0]\n"
         "t = (statistics.mean(a) - statistics.mean(b)) / 1.0\n"
         "json.dump({'t': t}, open('metrics.json', 'w'))\n")
"""A job that follows the guideline: Welch's t with ``statistics``, into metrics.json."""
ELSEWHERE = "import pandas\nprint(pandas.read_csv('measurements.csv').describe())\n"
"""A job that ignores it: it only describes the table."""


def outcome(skill_id: str, key: str, status: str = "completed",
            source: str = WELCH) -> TaskOutcome:
    run_id, task_id = key.split("/")
    return TaskOutcome(run_id=run_id, task_id=task_id, action=ACTION, status=status,
                       attempts=1, job_author="coder:fast", guidelines=[skill_id],
                       job=JobSpec(code=source, source=source, filename="job.py"),
                       duration_s=2.0, cost_usd=0.01)


async def test_a_matching_guideline_is_offered_by_id_and_score_never_as_a_job(
        store: SkillStore, library: SkillLibrary, tmp_path: Path) -> None:
    skill = await imported(store, tmp_path)
    answer = await library.match_skills(task_match())
    (ref,) = answer.guidelines["compare"]
    assert (ref.skill_id, ref.name) == (skill.skill_id, NAME)
    assert 0 < ref.score <= 1
    assert answer.applications == []
    assert (await store.get(skill.skill_id)).metrics.retrieved == 1


async def test_a_task_about_something_else_gets_no_guideline(
        store: SkillStore, library: SkillLibrary, tmp_path: Path) -> None:
    await imported(store, tmp_path)
    answer = await library.match_skills(task_match(
        "Render the station map as an interactive globe with night lighting"))
    assert "compare" not in answer.guidelines


async def test_a_guideline_the_job_did_not_follow_is_retrieved_not_used(
        store: SkillStore, library: SkillLibrary, tmp_path: Path) -> None:
    skill = await imported(store, tmp_path)
    await library.match_skills(task_match())
    ignored = outcome(skill.skill_id, "run-1/compare", source=ELSEWHERE)
    answer = await library.record_outcomes([ignored, ignored])
    assert answer.used == [] and answer.unused == [skill.skill_id] * 2
    assert answer.utilisation == {"run-1/compare": 0.0}
    after = (await store.get(skill.skill_id)).metrics
    assert (after.retrieved, after.used, after.succeeded) == (1, 0, 0)
    assert utility(after) == 0  # offered is not used: maintenance sees no contribution
    notes = [e.detail for e in await store.events(skill.skill_id) if e.action == "unused"]
    assert notes == [{"key": "run-1/compare#guideline:" + skill.skill_id, "alpha": 0.0,
                      "succeeded": True}], "noted once, with its alpha_match"


async def test_a_prompted_guideline_counts_as_used_and_its_outcome_moves_its_utility(
        store: SkillStore, library: SkillLibrary, tmp_path: Path) -> None:
    skill = await imported(store, tmp_path)
    await library.match_skills(task_match())
    before = (await store.get(skill.skill_id)).metrics
    assert utility(before) == 0
    done = outcome(skill.skill_id, "run-1/compare")
    answer = await library.record_outcomes([done, done])
    await library.record_outcomes([done])  # a repeated signal counts nothing more
    assert answer.used == [skill.skill_id]
    assert answer.utilisation == {"run-1/compare": 1.0}
    after = (await store.get(skill.skill_id)).metrics
    assert (after.used, after.succeeded) == (1, 1)
    assert utility(after) > 0
    await library.record_outcomes([outcome(skill.skill_id, "run-2/compare", "failed")])
    failed = (await store.get(skill.skill_id)).metrics
    assert (failed.used, failed.succeeded) == (2, 1)  # a use that did not succeed


async def test_only_guideline_skills_are_read_into_prompts_not_a_subagents_text(
        store: SkillStore) -> None:
    guide = SkillPattern(name="seeding", description="Guidance: seeding",
                         guideline="Seed every permutation.")
    agent = SkillPattern(name="fitter", description="Fits in batches", kind="subagent",
                         guideline="Halve the batch when memory runs out.")
    for pattern in (guide, agent):
        await store.add(Skill(pattern=pattern, status="active"), by="test")
    found = await StoredGuidelines(store).patterns(["seeding@v1", "fitter@v1", "gone@v1"])
    assert list(found) == ["seeding@v1"]
