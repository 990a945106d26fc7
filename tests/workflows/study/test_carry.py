"""What a cycle carries on: its summary from the report, failed and deferred tasks, the state."""

from __future__ import annotations

from typing import Any

from tests.workflows.study.factories import decision, hypothesis, plan, report, result
from workflows.contracts.alternatives import Metric
from workflows.contracts.estimates import Estimate
from workflows.contracts.study import (
    FULL_SUMMARIES,
    MAX_CARRIED,
    MAX_METRICS,
    CycleDecision,
    CycleSummary,
    StudyPolicy,
    StudyState,
)
from workflows.study.carry import carry_forward, close_cycle, summarize, with_decision

NOTE: dict[str, Any] = {"note_id": "n1", "task_id": "2", "kind": "execution",
                        "root_cause": "no module named sklearn", "likely_fix": "add it",
                        "confidence": 0.4, "decision": "defer"}


def two_task_report(cost: float = 0.5) -> Any:
    the_plan = plan([decision("1", hypothesis="H1", estimated_resources={"minutes": 2,
                                                                          "cost_usd": 0.1},
                              checks=[{"metric": "rows", "op": ">=", "value": 1}]),
                     decision("2", hypothesis="H1")],
                    hypotheses=[hypothesis("H1").model_dump()])
    done = result("1", metrics={"auc": 0.91, "rows": 150, "table": [1, 2]},
                  checks=[{"check": {"metric": "rows", "op": ">=", "value": 1}, "passed": True,
                           "actual": 150}], model={"usage": {"cost_usd": 0.2}})
    failed = result("2", status="deferred", reason="deferred to the next planning cycle",
                    metrics={"auc": 0.99}, reflections=[NOTE])
    return report([done, failed], the_plan, cost=cost)


def test_a_summary_says_each_tasks_outcome_against_its_estimate() -> None:
    got = summarize(two_task_report(), 1)
    first, second = sorted(got.tasks, key=lambda t: t.task_id)
    assert (first.status, first.metrics, first.checks_passed, first.checks_declared) == (
        "completed", {"auc": 0.91, "rows": 150}, 1, 1)
    assert (first.wall_s, first.estimated_s, first.cost_usd, first.estimated_cost_usd) == (
        30.0, 120.0, 0.2, 0.1)
    assert second.metrics == {}, "a task that did not complete has no verified metrics"
    assert second.diagnosis == "no module named sklearn; likely fix: add it"
    assert (got.unfinished, got.tasks_total, got.cost_usd, got.wall_s) == (1, 2, 0.5, 120.0)
    assert got.blockers == ["task 2 deferred: deferred to the next planning cycle"]
    assert [(d.task_id, d.confidence) for d in got.deferred] == [("2", 0.4)]


def test_failed_tasks_are_carried_until_a_task_of_their_id_completes() -> None:
    carried, dropped = carry_forward([], summarize(two_task_report(), 1))
    assert ([(c.task_id, c.cycle, c.diagnosis) for c in carried], dropped) == (
        [("2", 1, "no module named sklearn; likely fix: add it")], 0)
    other = summarize(report([result("7")]), 2)
    assert [c.task_id for c in carry_forward(carried, other)[0]] == ["2"]
    fixed = summarize(report([result("2")]), 3)
    assert carry_forward(carried, fixed)[0] == []


def test_carrying_more_than_the_bound_drops_the_oldest_and_counts_them() -> None:
    many = summarize(report([result(str(i), status="failed") for i in range(MAX_CARRIED + 3)]),
                     1)
    carried, dropped = carry_forward([], many)
    assert (len(carried), dropped, carried[0].task_id) == (MAX_CARRIED, 3, "3")


def test_two_cycles_refute_then_pivot_and_support() -> None:
    state = StudyState(study_id="s", goal="does it predict?",
                       policy=StudyPolicy(acceptance=[], max_cycles=5))
    first_plan = plan([decision("1", hypothesis="H1")],
                      hypotheses=[hypothesis("H1").model_dump(),
                                  hypothesis("H2", metric="f1", threshold=0.6).model_dump()])
    state = close_cycle(state, report([result("1", metrics={"auc": 0.62})], first_plan, 1.5))
    cycle1 = state.summaries[-1]
    assert cycle1.decision is not None
    assert (cycle1.decision.action, cycle1.decision.pursue) == ("pivot", "H2")
    assert cycle1.decision.reason == ("H1 refuted: auc = 0.62 (task 1), not >= 0.8; pivot to "
                                      "its sibling H2: claim H2")
    second_plan = plan([decision("1", hypothesis="H2")],
                       hypotheses=[hypothesis("H2", metric="f1", threshold=0.6).model_dump()])
    state = close_cycle(state, report([result("1", metrics={"f1": 0.7})], second_plan, 2.0,
                                      run_id="run-2"))
    assert [(h.id, h.status, h.decided_in) for h in state.tree.hypotheses] == [
        ("H1", "refuted", 1), ("H2", "supported", 2)]
    assert (state.cycles, state.spent_usd) == (2, 3.5)
    assert state.summaries[-1].decision is not None
    assert state.summaries[-1].decision.reason.endswith("no open hypothesis left: iterate on "
                                                        "the next question")
    person = CycleDecision(action="stop", reason="enough", by="ada")
    assert with_decision(state, person).summaries[-1].decision == person


def test_old_cycles_keep_their_headline_only() -> None:
    state = StudyState(study_id="s", goal="g", policy=StudyPolicy(max_cycles=50))
    for cycle in range(1, FULL_SUMMARIES + 3):
        state = close_cycle(state, two_task_report())
        assert state.cycles == cycle
    old, recent = state.summaries[0], state.summaries[-1]
    assert (old.tasks, old.deferred, old.tasks_total, old.unfinished) == ([], [], 2, 1)
    assert len(recent.tasks) == 2
    assert [len(s.tasks) for s in state.summaries] == [0, 0] + [2] * FULL_SUMMARIES


def test_a_summary_keeps_estimates_whole_and_reads_the_key_value_from_their_point() -> None:
    gain = {"value": 0.01145, "ci": [-0.0087, 0.0316], "level": 0.95, "n": 442,
            "method": "bootstrap"}
    bad = {"value": 0.7, "ci": [0.4, 0.6], "level": 0.95}
    done = result("1", metrics={"r2_gain": gain, "r2": bad, "per_class": {"a": 1}})
    got = summarize(report([done]), 1, Metric(name="r2_gain"), frozenset({"r2_gain.ci_low"}))
    [outcome] = got.tasks
    assert list(outcome.metrics) == ["r2_gain"], "a malformed estimate or other object is not kept"
    kept = outcome.metrics["r2_gain"]
    assert isinstance(kept, Estimate) and kept.ci == (-0.0087, 0.0316) and kept.n == 442
    assert (got.key_value, got.key_ci) == (0.01145, (-0.0087, 0.0316))
    again = CycleSummary.model_validate_json(got.model_dump_json())
    assert again.tasks[0].metrics == outcome.metrics


def test_the_key_value_names_the_task_it_came_from() -> None:
    tasks = [result("ols", metrics={"test_r2": 0.4823}),
             result("ridge", metrics={"test_r2": 0.4881}),
             result("lasso", metrics={"test_r2": 0.4861}), result("failed", status="failed")]
    got = summarize(report(tasks), 2, Metric(name="test_r2"))
    assert (got.key_value, got.key_task) == (0.4881, "ridge")
    low = summarize(report(tasks), 2, Metric(name="test_r2", direction="minimize"))
    assert (low.key_value, low.key_task) == (0.4823, "ols")
    assert summarize(report(tasks), 2, None).key_task == ""
    assert summarize(report(tasks), 2, Metric(name="auc")).key_task == ""
    assert got.key_ci is None, "a plain value has no interval"


def test_each_cycle_calibrates_its_task_kinds_and_the_next_estimates_carry_it() -> None:
    state = StudyState(study_id="s", goal="how long?", policy=StudyPolicy(max_cycles=5))
    timed = plan([decision("1", estimated_resources={"minutes": 2})])  # actual: 30 s
    state = close_cycle(state, report([result("1")], timed))
    first = state.summaries[-1].tasks[0]
    assert (first.estimated_s, first.wall_s, first.calibrated_s) == (120.0, 30.0, None)
    calibration = state.calibration[first.kind]
    assert (calibration.factor, calibration.accuracy) == (0.25, 0.25)
    state = close_cycle(state, report([result("1")], timed, run_id="run-2"))
    second = state.summaries[-1].tasks[0]
    assert second.calibrated_s == 30.0  # the 2 min estimate, calibrated: 30 s
    calibration = state.calibration[first.kind]
    assert (calibration.factor, calibration.tasks, calibration.accuracy,
            calibration.calibrated_accuracy) == (0.25, 2, 0.25, 1.0)


def test_a_line_whose_fixes_keep_failing_escalates_and_the_tree_marks_it_abandoned() -> None:
    state = StudyState(study_id="s", goal="does it predict?", policy=StudyPolicy(max_cycles=9))
    hypotheses = [hypothesis("H1").model_dump(), hypothesis("H2").model_dump()]
    failing = plan([decision("1", hypothesis="H1")], hypotheses=hypotheses)
    actions: list[tuple[str, bool]] = []
    for cycle in (1, 2, 3):
        state = close_cycle(state, report([result("1", status="failed")], failing,
                                          run_id=f"run-{cycle}"))
        made = state.summaries[-1].decision
        assert made is not None
        actions.append((made.action, made.escalated))
    assert actions == [("fix", False), ("fix", False), ("pivot", True)]
    assert state.tree.get("H1").abandoned_in == 3
    assert [h.id for h in state.tree.open()] == ["H2"]


def test_a_persons_decision_instead_of_an_escalation_takes_the_line_back() -> None:
    state = StudyState(study_id="s", goal="does it predict?", policy=StudyPolicy(max_cycles=9))
    failing = plan([decision("1", hypothesis="H1")],
                   hypotheses=[hypothesis("H1").model_dump(), hypothesis("H2").model_dump()])
    for cycle in (1, 2, 3):
        state = close_cycle(state, report([result("1", status="failed")], failing,
                                          run_id=f"run-{cycle}"))
    assert state.tree.get("H1").abandoned_in == 3
    person = CycleDecision(action="fix", reason="one more try", by="ada", fixes=["H1"])
    assert with_decision(state, person).tree.get("H1").abandoned_in is None
    confirmed = state.summaries[-1].decision
    assert confirmed is not None
    assert with_decision(state, confirmed).tree.get("H1").abandoned_in == 3


def test_a_summary_keeps_the_metric_a_task_s_check_names_before_the_others() -> None:
    many = {f"m{n:02d}": n for n in range(MAX_METRICS + 3)}
    check = {"metric": "m10", "op": ">=", "value": 0}
    done = result("1", metrics=many, checks=[{"check": check, "passed": True, "actual": 10}])
    got = summarize(report([done], plan([decision("1", checks=[check])])), 1).tasks[0]
    assert len(got.metrics) == MAX_METRICS and got.metrics["m10"] == 10
    assert got.metrics_omitted == "… 3 more metrics not shown: m07, m08, m09"


def test_a_summary_keeps_as_many_metrics_a_task_as_it_is_asked() -> None:
    many = {f"m{n:02d}": n for n in range(MAX_METRICS + 3)}
    got = summarize(report([result("1", metrics=many)]), 1, metrics=MAX_METRICS + 3).tasks[0]
    assert got.metrics == many and got.metrics_omitted == ""
