"""The batch as cases: what counts, and how often."""

from __future__ import annotations

from skills.extract import extract
from skills.extract.cases import skill_name
from tests.skills.extract.batches import NOW, only, outcome, sales_batch
from tests.workflows.contracts.test_kinds import BOOSTING, CURVE, LASSO, OLS, OPENING, SPLINES
from workflows.contracts.kinds import task_kind
from workflows.contracts.plan import JobSpec
from workflows.contracts.skills import TaskOutcome


def test_outcomes_without_a_resolved_job_or_with_no_verdict_do_not_count() -> None:
    batch = [outcome(i, source=None) for i in range(2)] + [outcome(5, "cancelled"),
                                                           outcome(6, "deferred")]
    batch += [outcome(i) for i in range(7, 10)]
    result = extract(batch, [], now=NOW)
    skill = only(result)
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (3, 0)
    assert result.skipped == ["2 outcome(s) had no resolved job (no source) and were not "
                              "considered"]


def test_a_repeated_outcome_counts_once() -> None:
    batch = sales_batch()
    skill = only(extract([*batch, *batch[:3]], [], now=NOW))
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (7, 3)


STUDY = (("ordinary least squares", OLS), ("gradient boosting", BOOSTING),
         ("lasso with interactions", LASSO), ("additive splines", SPLINES),
         ("a learning curve", CURVE))


def study_outcome(n: int, how: str, source: str) -> TaskOutcome:
    job = JobSpec(code=source, source=source, filename="job.py", expected_metrics=["r2"])
    return TaskOutcome(run_id=f"cycle-{n}", task_id=how.replace(" ", "-"),
                       action=f"{OPENING}: {how}", status="completed", job=job,
                       input_names=["housing.csv"], acceptance_criteria=["r2 reported"])


def test_analyses_that_open_alike_are_never_one_skill() -> None:
    """The study's five analyses, one sentence opening each: one group each, not one skill."""
    batch = [study_outcome(n, how, src) for n in range(3) for how, src in STUDY]
    result = extract(batch, [], now=NOW)
    assert len(result.new) == 5
    for skill in result.new:
        pattern = skill.pattern
        assert skill.metrics.evidence_successes == 3
        assert pattern.job is not None
        how = next(how for how, src in STUDY if src == (pattern.job.source or ""))
        assert pattern.action == f"{OPENING}: {how}"  # the action belongs to the job
        assert task_kind(pattern.action, pattern.job, ["housing.csv"]) in pattern.context


def test_a_candidate_says_why_its_tasks_were_grouped() -> None:
    batch = [study_outcome(n, "ordinary least squares", OLS) for n in range(3)]
    batch += [study_outcome(9, "gradient boosting", BOOSTING)]
    result = extract(batch, [], now=NOW)
    context = only(result).pattern.context
    assert ("Grouped from 3 successful and 0 failed tasks because they share the kind "
            "regression.linear:sklearn|csv|r2: analysis regression.linear (its job calls "
            "sklearn.linear_model.LinearRegression); libraries sklearn; data csv; metrics r2."
            ) in context
    assert any(s.startswith("boosting:sklearn|csv|r2 (job.py): 1 successful")
               for s in result.skipped)


def test_kinds_too_long_for_a_name_keep_apart() -> None:
    head = "regression.lasso+interactions:sklearn+statsmodels|csv+parquet+txt|"
    first, second = skill_name(head + "mae+r2+rmse"), skill_name(head + "mae+r2+rse")
    assert first != second and len(first) <= 64 and len(second) <= 64
    assert first.startswith("regression-lasso-interactions-sklearn-statsmodels-csv")
    assert skill_name("regression.linear:sklearn|csv|r2") == "regression-linear-sklearn-csv-r2"
