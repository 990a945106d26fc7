"""Choosing a skill for a task: a job of another analysis than the task names does not fit."""

from __future__ import annotations

from datetime import UTC, datetime

from skills.choosing import choose, kind_problem
from skills.index import Hit
from tests.workflows.contracts.test_kinds import LASSO, OLS
from workflows.contracts.patterns import Skill, SkillPattern
from workflows.contracts.plan import JobSpec
from workflows.contracts.policy import SkillPolicy

ASK = "Fit a lasso regression with interactions of price on the housing table"


def skill(name: str, source: str) -> Skill:
    job = JobSpec(code=source, source=source, filename="job.py", expected_metrics=["r2"])
    return Skill(pattern=SkillPattern(name=name, description="Model housing prices", job=job,
                                      action="Model housing prices"),
                 status="active", confidence=1.0)


def test_a_job_of_another_analysis_does_not_fit_the_task() -> None:
    assert kind_problem(ASK, skill("lasso", LASSO)) is None
    assert kind_problem(ASK, skill("ols", OLS)) == (
        "its job does regression.linear (sklearn.linear_model.LinearRegression), not the "
        "regression.lasso the task asks for")
    assert kind_problem("Model the housing prices", skill("ols", OLS)) is None  # names none
    assert kind_problem("Fit a regression of price", skill("ols", OLS)) is None  # covers it


def test_the_skill_of_the_named_analysis_is_chosen_though_the_other_is_more_similar() -> None:
    skills = {s.skill_id: s for s in (skill("ols", OLS), skill("lasso", LASSO))}
    hits = [Hit(skill_id="ols@v1", similarity=0.95, fused=0.1),
            Hit(skill_id="lasso@v1", similarity=0.7, fused=0.05)]
    found, applied, _ = choose(SkillPolicy(min_confidence=0.5), "t1", ASK, [], "r/t1", hits,
                               skills, datetime(2026, 3, 1, tzinfo=UTC),
                               can_import=lambda _: True)
    assert applied is not None and applied.use.skill_id == "lasso@v1"
    assert not next(r for r in found if r.skill_id == "ols@v1").preconditions_hold
