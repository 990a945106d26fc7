"""Applying a pattern: preconditions, parameters filled from the text and data, the job."""

from __future__ import annotations

import pytest

from skills.apply import fill_text, fit, header_columns, instantiate
from skills.builtin import builtin_skills
from workflows.contracts.patterns import Preconditions, SkillParameter, SkillPattern
from workflows.contracts.plan import JobSpec

SOURCE = "import argparse\n"


def pattern(**extra: object) -> SkillPattern:
    base: dict[str, object] = dict(
        name="train-model-batches", description="Train in batches",
        action="Train on {data} with batches of {batch_size}",
        preconditions=Preconditions(input_types=["csv"], imports=["numpy"],
                                    keywords=["train", "fit"]),
        parameters=[
            SkillParameter(name="data", type="file_path", target="input", extensions=["csv"]),
            SkillParameter(name="batch_size", type="integer", default=16, minimum=1,
                           maximum=64),
            SkillParameter(name="optimizer", type="enum", options=["adam", "sgd"],
                           default="adam"),
            SkillParameter(name="alpha", type="number", default=0.05, minimum=0, maximum=1)],
        job=JobSpec(code=SOURCE, source=SOURCE, filename="train.py",
                    args={"data": "old.csv", "batch_size": 16, "optimizer": "adam",
                          "alpha": 0.05}))
    base.update(extra)
    return SkillPattern.model_validate(base)


def everything(_: str) -> bool:
    return True


def test_values_come_from_the_text_and_the_data_else_defaults() -> None:
    found = fit(pattern(), "Train the model on sales.csv with batch size 32 using sgd",
                ["notes.txt", "sales.csv"], can_import=everything)
    assert found.holds, found.problems
    assert found.values == {"data": "sales.csv", "batch_size": 32, "optimizer": "sgd",
                            "alpha": 0.05}
    assert found.inputs == ["sales.csv"]
    assert found.score == 1.0


def test_the_named_data_file_is_preferred_to_the_first_of_its_type() -> None:
    found = fit(pattern(), "Train on b.csv", ["a.csv", "b.csv"], can_import=everything)
    assert found.values["data"] == "b.csv"


def test_a_value_out_of_range_is_a_problem_not_clipped() -> None:
    found = fit(pattern(), "train with batch_size=1000", ["x.csv"], can_import=everything)
    assert not found.holds
    assert any("above its maximum 64" in p for p in found.problems)
    assert "batch_size" not in found.values


def test_preconditions_that_no_longer_hold_are_named() -> None:
    found = fit(pattern(), "Summarise the weather", ["x.json"], can_import=lambda m: False)
    assert not found.holds
    assert found.score == 0.0
    text = " | ".join(found.problems)
    assert "no csv data file" in text and "'numpy' is not installed" in text
    assert "none of the words" in text and "parameter 'data' has no value" in text


def test_instantiate_fills_the_job_arguments_and_keeps_the_code() -> None:
    values = {"data": "s.csv", "batch_size": 8, "optimizer": "sgd", "alpha": 0.1}
    job = instantiate(pattern(), values)
    assert job.args == values
    assert job.source == SOURCE
    template = pattern().job
    assert template is not None and template.args["batch_size"] == 16


def test_a_guideline_pattern_has_no_job_to_instantiate() -> None:
    with pytest.raises(ValueError, match="guideline"):
        instantiate(pattern(job=None), {})


def test_fill_text_leaves_unknown_names() -> None:
    assert fill_text("on {data} by {other}", {"data": "s.csv"}) == "on s.csv by {other}"


@pytest.mark.parametrize(("param", "value", "message"), [
    (SkillParameter(name="n", type="integer"), 1.5, "whole number"),
    (SkillParameter(name="n", type="integer"), True, "takes a number"),
    (SkillParameter(name="n", type="number", minimum=0), -1, "below its minimum"),
    (SkillParameter(name="e", type="enum", options=["a"]), "b", "not one of"),
    (SkillParameter(name="f", type="file_path", extensions=["csv"]), "x.json", "csv file"),
    (SkillParameter(name="b", type="boolean"), "yes", "true or false"),
    (SkillParameter(name="s", type="string"), 3, "takes text"),
])
def test_parameter_problems(param: SkillParameter, value: object, message: str) -> None:
    problem = param.problem(value)  # type: ignore[arg-type]
    assert problem is not None and message in problem


def _builtin(name: str) -> SkillPattern:
    return next(s.pattern for s in builtin_skills() if s.pattern.name == name)


def test_a_goal_in_other_word_forms_fits_the_regression_preconditions() -> None:
    found = fit(_builtin("linear-regression"), "Does y depend linearly on x", ["data.csv"],
                can_import=everything)
    assert found.holds, found.problems
    assert found.score == 1.0


@pytest.mark.parametrize("goal", [
    "Trace the lineage of each sample",  # shares a prefix with "line", not a form of it
    "Describe the spread of the outlying values",
    "Is the fitness of each strain above average",
])
def test_a_goal_that_only_looks_like_the_keywords_does_not_fit(goal: str) -> None:
    found = fit(_builtin("linear-regression"), goal, ["data.csv"], can_import=everything)
    assert not found.holds
    assert any("none of the words" in p for p in found.problems)


def test_a_keyword_of_several_words_needs_each_of_them() -> None:
    groups = _builtin("compare-two-groups").model_copy(deep=True)
    groups.preconditions.keywords = ["t-test"]
    assert fit(groups, "Run a t-test on the two sites", ["a.csv"], can_import=everything).holds
    assert fit(groups, "Run Welch's t test on them", ["a.csv"], can_import=everything).holds
    assert not fit(groups, "Test the two sites", ["a.csv"], can_import=everything).holds


@pytest.mark.parametrize(("confidence", "said"), [
    (0.7496, "has confidence 0.7496, below 0.75"),  # not "0.75, below 0.75"
    (0.5, "has confidence 0.50, below 0.75"),
    (0.749999, "has confidence 0.749999, below 0.75"),
])
def test_why_no_skill_applied_never_shows_the_threshold_as_the_confidence(
        confidence: float, said: str) -> None:
    from skills.choosing import _why_not  # pyright: ignore[reportPrivateUsage]
    from workflows.contracts.policy import SkillPolicy
    from workflows.contracts.skills import Retrieved

    found = [Retrieved(skill_id="describe-column@v1", similarity=0.6, confidence=confidence,
                       preconditions_hold=True)]
    assert _why_not(found, SkillPolicy(min_confidence=0.75)).endswith(said)


def test_column_parameters_take_the_columns_the_goal_names_from_the_header() -> None:
    groups = _builtin("compare-two-groups")
    headers = {"sales.csv": header_columns("region,revenue,unit price\nnorth,3,1.5\n")}
    assert headers["sales.csv"] == ["region", "revenue", "unit price"]
    found = fit(groups, "Compare revenue by region in sales.csv", ["sales.csv"],
                can_import=everything, headers=headers)
    assert found.holds, found.problems
    assert (found.values["group_column"], found.values["value_column"]) == ("region", "revenue")
    named = fit(groups, "Compare the groups: value_column=unit_price, group column region",
                ["sales.csv"], can_import=everything, headers=headers)
    assert (named.values["group_column"], named.values["value_column"]) == (
        "region", "unit price")
    # no column named, or no header known: the defaults stay
    plain = fit(groups, "Compare the two groups in sales.csv", ["sales.csv"],
                can_import=everything, headers=headers)
    assert (plain.values["group_column"], plain.values["value_column"]) == ("group", "value")
    blind = fit(groups, "Compare revenue by region", ["sales.csv"], can_import=everything)
    assert blind.values["value_column"] == "value"
    assert header_columns("a\tb\tc\n") == ["a", "b", "c"] and header_columns("") == []


@pytest.mark.parametrize(("goal", "x", "y"), [
    ("Does the response rise linearly with the dose in the dose table? Estimate the slope.",
     "dose", "response"),
    ("Regress response on dose and report the slope", "dose", "response"),
    ("Estimate the effect of dose on response with a linear fit", "dose", "response"),
    ("Predict the response from the dose with a least-squares line", "dose", "response"),
    ("Does dose increase with response? Fit a line", "response", "dose"),
])
def test_a_regression_takes_response_and_explanatory_columns_by_their_roles(
        goal: str, x: str, y: str) -> None:
    line = _builtin("linear-regression")
    headers = {"dose.csv": header_columns("dose,response\n1,2.1\n")}
    found = fit(line, goal, ["dose.csv"], can_import=everything, headers=headers)
    assert found.holds, found.problems
    assert (found.values["x"], found.values["y"]) == (x, y)


def test_columns_named_without_a_role_keep_the_order_they_are_named_in() -> None:
    line = _builtin("linear-regression")
    headers = {"dose.csv": header_columns("dose,response\n1,2.1\n")}
    found = fit(line, "Fit a linear trend between dose and response", ["dose.csv"],
                can_import=everything, headers=headers)
    assert (found.values["x"], found.values["y"]) == ("dose", "response")
