"""alpha_match and beta_util: whether the job a task ran used what it was offered."""

from __future__ import annotations

from skills.utilisation import THETA, beta_util, guideline_alpha, guideline_calls, job_alpha, used
from tests.workflows.contracts.test_kinds import BOOSTING, LASSO, OLS
from workflows.contracts.patterns import Preconditions, SkillPattern
from workflows.contracts.plan import JobSpec


def job(source: str) -> JobSpec:
    return JobSpec(code=source, source=source, filename="job.py")


def skill(source: str | None = None, guideline: str = "", imports: list[str] | None = None,
          ) -> SkillPattern:
    return SkillPattern(name="s", description="d", job=job(source) if source else None,
                        guideline=guideline, preconditions=Preconditions(imports=imports or []))


def test_a_job_skill_is_used_when_the_job_that_ran_keeps_its_analysis() -> None:
    assert job_alpha(skill(OLS), job(OLS)) == 1.0
    debugged = OLS.replace("random_state=0", "random_state=1, test_size=0.3")
    assert job_alpha(skill(OLS), job(debugged)) == 1.0  # repaired, same calls
    assert used(job_alpha(skill(OLS), job(debugged)))
    switched = job_alpha(skill(LASSO), job(BOOSTING))  # the coder wrote another analysis
    assert switched < THETA and not used(switched)
    assert job_alpha(skill(OLS), None) == 0.0  # nothing ran


def test_a_guideline_is_used_when_the_job_makes_the_calls_it_names() -> None:
    text = ("Fit a mixed model:\n```python\nimport statsmodels.formula.api as smf\n"
            "smf.mixedlm('y ~ x', df, groups=df.site).fit()\n```\n"
            "Then check residuals with `scipy.stats.shapiro`.")
    assert guideline_calls(text) == {"mixedlm", "shapiro"}
    follows = "from statsmodels.formula.api import mixedlm\nmixedlm('y ~ x', d, groups=g)\n"
    assert guideline_alpha(skill(guideline=text), job(follows)) == 0.5
    assert guideline_alpha(skill(guideline=text), job(OLS)) == 0.0
    assert guideline_calls("Compare with a t-test (see the notes).") == set()


def test_a_guideline_naming_no_call_is_judged_by_its_imports() -> None:
    pattern = skill(guideline="Be careful with leakage.", imports=["sklearn.model_selection"])
    assert guideline_alpha(pattern, job(OLS)) == 1.0
    assert guideline_alpha(pattern, job("import statistics\n")) == 0.0


def test_beta_util_is_the_share_of_offered_patterns_used() -> None:
    assert beta_util([1.0, 0.5, 0.2, 0.0]) == 0.5
    assert beta_util([]) == 0.0
