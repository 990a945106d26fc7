"""Selection respects held-out data, and tied lines are kept by a declared rule."""

from __future__ import annotations

import pytest

from tests.workflows.harness import task
from workflows.branching.compare import rank, score
from workflows.branching.requests import BranchRefusedError, RunView, plan_request
from workflows.branching.selection import (
    allowed_note,
    break_tie,
    held_out,
    held_out_problem,
    study_problem,
    tie_choice,
    tie_reason,
    tied,
    ties,
)
from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import BranchChange, BranchRecord, BranchRequest, LineScore
from workflows.contracts.plan import Plan
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import TaskResult


def line(value: float | None, ci: tuple[float, float] | None = None, *, cost: float = 0.0,
         completed: bool = True) -> LineScore:
    return LineScore(completed=completed, metric=value, interval=ci, cost_usd=cost)


def test_a_test_prefix_or_a_plans_list_makes_a_metric_held_out() -> None:
    assert held_out("test_r2") and held_out("test_r2.ci_low")
    assert held_out("holdout_auc", ["holdout_auc"]) and held_out("holdout_auc.value",
                                                                  ["holdout_auc"])
    assert not held_out("cv_r2") and not held_out("r2_test") and not held_out("contest_r2")


def test_selection_on_a_held_out_metric_is_refused_naming_it_and_the_flag() -> None:
    problem = held_out_problem(Metric(name="test_r2"), [], "branch selection")
    assert "metric 'test_r2'" in problem and "--allow-test-selection" in problem
    listed = held_out_problem(Metric(name="r2_holdout"), ["r2_holdout"], "the study's key metric")
    assert "listed as held out by the plan" in listed
    assert held_out_problem(Metric(name="cv_r2"), ["r2_holdout"], "x") == ""
    assert held_out_problem(None, [], "x") == ""
    assert "allowed by --allow-test-selection" in allowed_note(Metric(name="test_r2"), [])


def view(held: list[str] | None = None) -> RunView:
    plan = Plan.model_validate({"decisions": [task("1", score=0.5)], "held_out": held or []})
    done = TaskResult(task_id="1", status="completed", status_reason="ok",
                      job=plan.decisions[0].job)
    return RunView(run_id="r", plan=plan, order=["1"], results={"1": done})


def request(metric: str, **extra: object) -> BranchRequest:
    return BranchRequest.model_validate({
        "from_task": "1", "by": "ada", "metric": {"name": metric}, **extra,
        "branches": [{"name": "hi", "set": {"args.score": 0.9}}]})


def test_a_branch_request_on_a_held_out_metric_is_refused_unless_allowed() -> None:
    with pytest.raises(BranchRefusedError, match="metric 'test_r2', which is held out"):
        plan_request(request("test_r2"), view(), RunPolicy())
    with pytest.raises(BranchRefusedError, match="listed as held out by the plan"):
        plan_request(request("auc"), view(["auc"]), RunPolicy())
    allowed = plan_request(request("test_r2", allow_test_selection=True), view(), RunPolicy())
    assert allowed[0].record.held_out_allowed
    by_policy = RunPolicy.model_validate({"branching": {"allow_test_selection": True,
                                                        "ties": "cheapest"}})
    record = plan_request(request("test_r2"), view(), by_policy)[0].record
    assert record.held_out_allowed and record.ties == "cheapest"
    assert not plan_request(request("cv_r2"), view(), RunPolicy())[0].record.held_out_allowed


def test_lines_tie_when_a_value_lies_within_the_others_interval() -> None:
    assert tied(line(0.55, (0.45, 0.65)), line(0.5, (0.4, 0.6)))
    assert tied(line(0.55, (0.45, 0.65)), line(0.5))  # one interval is enough
    assert not tied(line(0.9, (0.88, 0.92)), line(0.5, (0.4, 0.6)))
    assert not tied(line(0.5008), line(0.5))  # no interval: the point difference decides
    assert not tied(line(None), line(0.5, (0.4, 0.6)))


def test_ties_lists_the_lines_tied_with_the_leader_on_equal_completion() -> None:
    lines = {"main": line(0.5, (0.4, 0.6)), "a": line(0.55, (0.45, 0.65)),
             "b": line(0.9, (0.85, 0.95)), "c": line(0.58, (0.5, 0.66), completed=False)}
    order = rank(lines, Metric(name="score"))
    assert order == ["b", "a", "main", "c"] and ties(order, lines) == []
    del lines["b"]
    order = rank(lines, Metric(name="score"))
    assert ties(order, lines) == ["a", "main"]  # c did not complete: never tied with a
    assert ties([], {}) == []


def test_the_tie_rule_keeps_the_simplest_or_the_cheapest_line() -> None:
    lines = {"main": line(0.5, (0.4, 0.6), cost=0.3), "a": line(0.55, (0.45, 0.65), cost=0.1),
             "b": line(0.52, (0.42, 0.62), cost=0.1)}
    tied_lines = ["a", "b", "main"]
    changed = {"a": 1, "b": 1}
    started = ["main", "a", "b"]
    assert break_tie(tied_lines, lines, "simplest", changed, started) == "main"
    assert break_tie(["a", "b"], lines, "simplest", {"a": 2, "b": 1}, started) == "b"
    assert break_tie(["b", "a"], lines, "simplest", changed, started) == "a"  # the earliest
    assert break_tie(tied_lines, lines, "cheapest", changed, started) == "a"
    assert break_tie(tied_lines, lines, "person", changed, started) == "a"
    assert tie_reason(tied_lines, "main", "simplest", "score") == (
        "tie on score: a, b, main differ within their intervals; main kept as the simplest "
        "line (fewest parameters changed, then the earliest)")


def test_a_line_scores_an_estimates_value_and_keeps_its_interval() -> None:
    estimate = {"value": 0.49, "ci": [0.42, 0.55], "level": 0.95}
    done = TaskResult(task_id="1", status="completed", status_reason="ok", metrics={"r2": estimate})
    scored = score([done], 0, Metric(name="r2"))
    assert scored.metric == 0.49 and scored.interval == (0.42, 0.55)
    plain = score([done.model_copy(update={"metrics": {"r2": 0.5}})], 0, Metric(name="r2"))
    assert plain.metric == 0.5 and plain.interval is None


def test_a_groups_selection_and_tie_rule_decide_among_tied_lines() -> None:
    def member(name: str, selection: str = "best", rule: str = "simplest") -> BranchRecord:
        return BranchRecord.model_validate({
            "name": name, "from_task": "1", "selection": selection, "ties": rule,
            "changes": [BranchChange(task_id="1", field="args.a", new=1).model_dump()]})

    lines = {"main": line(0.5, (0.4, 0.6), cost=0.3), "a": line(0.55, (0.45, 0.65), cost=0.1)}
    assert tie_choice([member("a")], ["a", "main"], lines) == "main"
    assert tie_choice([member("a", rule="cheapest")], ["a", "main"], lines) == "a"
    assert tie_choice([member("a", rule="person")], ["a", "main"], lines) is None
    assert tie_choice([member("a", selection="person")], ["a", "main"], lines) is None
    assert tie_choice([member("a", selection="keep_all")], ["a", "main"], lines) == "main"


def test_a_studys_key_metric_is_checked_against_every_plans_held_out_list() -> None:
    plans = [Plan.model_validate({"decisions": [task("1")]}),
             Plan.model_validate({"decisions": [task("1")], "held_out": ["auc_holdout"]})]
    policy = RunPolicy().branching
    assert "listed as held out" in study_problem(Metric(name="auc_holdout"), plans, policy)
    assert "the study's key metric" in study_problem(Metric(name="test_auc"), [], policy)
    assert study_problem(Metric(name="cv_auc"), plans, policy) == ""
    with_metric = Plan.model_validate({"decisions": [task("1")], "metric": {"name": "test_x"}})
    assert "the plan's metric" in study_problem(None, [with_metric], policy)
