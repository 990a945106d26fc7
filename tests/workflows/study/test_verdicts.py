"""Hypothesis verdicts come from verified metrics, with the plan checks' exact semantics."""

from __future__ import annotations

import math

import pytest

from tests.workflows.study.factories import (
    decision,
    hypothesis,
    metric_test,
    outcome,
    plan,
    summary,
    tree,
)
from workflows.contracts.study import CycleSummary
from workflows.study.verdicts import acceptance, adopt, apply, criteria_hold, judge

THRESHOLD = 0.8
BELOW, ABOVE = math.nextafter(THRESHOLD, 0.0), math.nextafter(THRESHOLD, 1.0)
# (op, holds below, holds at, holds above): the plan checks' operators, spelled out
TABLE = [("<", True, False, False), ("<=", True, True, False), (">", False, False, True),
         (">=", False, True, True), ("==", False, True, False), ("!=", True, False, True)]


def one(cycle: CycleSummary, **items: object) -> str:
    verdicts = judge(tree(hypothesis("H1", **items)), cycle)  # type: ignore[arg-type]
    assert len(verdicts) == 1
    return verdicts[0].status


@pytest.mark.parametrize(("op", "below", "at", "above"), TABLE)
def test_each_operator_at_just_below_and_just_above_its_threshold(
        op: str, below: bool, at: bool, above: bool) -> None:
    for value, holds in ((BELOW, below), (THRESHOLD, at), (ABOVE, above)):
        cycle = summary(1, outcome("1", hypothesis="H1", auc=value))
        assert one(cycle, op=op) == ("supported" if holds else "refuted"), (op, value)


def test_a_verdict_names_the_value_and_keeps_it_as_evidence() -> None:
    verdicts = judge(tree(hypothesis("H1")), summary(2, outcome("7", hypothesis="H1", auc=0.91)))
    assert verdicts[0].reason == "H1 supported: auc = 0.91 (task 7) >= 0.8"
    assert [(e.task_id, e.metric, e.value, e.cycle) for e in verdicts[0].evidence] == [
        ("7", "auc", 0.91, 2)]


def test_a_missing_metric_is_inconclusive() -> None:
    verdicts = judge(tree(hypothesis("H1")), summary(1, outcome("1", hypothesis="H1", f1=0.9)))
    assert verdicts[0].status == "inconclusive"
    assert "task 1 reported no verified auc" in verdicts[0].reason


def test_a_failed_task_is_inconclusive_whatever_it_reported() -> None:
    failed = outcome("1", status="failed_final", hypothesis="H1")
    failed = failed.model_copy(update={"metrics": {"auc": 0.99}})
    verdicts = judge(tree(hypothesis("H1")), summary(1, failed))
    assert verdicts[0].status == "inconclusive"
    assert "task 1 did not complete (failed_final: exit 1)" in verdicts[0].reason


def test_text_against_a_number_and_nan_are_inconclusive() -> None:
    assert one(summary(1, outcome("1", hypothesis="H1", auc="high"))) == "inconclusive"
    assert one(summary(1, outcome("1", hypothesis="H1", auc=math.nan))) == "inconclusive"


def test_disagreeing_tasks_are_inconclusive_and_a_named_task_alone_decides() -> None:
    cycle = summary(1, outcome("1", hypothesis="H1", auc=0.9),
                    outcome("2", hypothesis="H1", auc=0.5))
    assert one(cycle) == "inconclusive"
    assert one(cycle, test={"metric": "auc", "op": ">=", "threshold": 0.8,
                            "task_id": "2"}) == "refuted"


def test_hypotheses_no_task_links_to_are_not_judged() -> None:
    assert judge(tree(hypothesis("H1")), summary(1, outcome("1", auc=0.9))) == []


def test_apply_decides_keeps_decided_against_inconclusive_and_marks_settled() -> None:
    start = tree(hypothesis("H1"), hypothesis("H2"))
    first = judge(start, summary(1, outcome("1", hypothesis="H1", auc=0.9),
                                 outcome("2", hypothesis="H2", f1=1.0)))
    after, marked = apply(start, first, 1)
    assert [(h.status, h.decided_in) for h in after.hypotheses] == [
        ("supported", 1), ("inconclusive", None)]
    assert [v.settled for v in marked] == [True, False]
    again = judge(after, summary(2, outcome("1", status="failed", hypothesis="H1"),
                                 outcome("2", hypothesis="H2", auc=0.9)))
    final, marked = apply(after, again, 2)
    assert [(h.status, h.decided_in) for h in final.hypotheses] == [
        ("supported", 1), ("supported", 2)]
    assert [v.settled for v in marked] == [False, True]
    assert [e.value for e in final.get("H1").evidence] == [0.9]


def test_a_check_reference_is_resolved_into_the_plans_check() -> None:
    ref = hypothesis("H1").model_copy(update={"test": metric_test("x", "<", 1)})
    proposal = ref.model_validate({**ref.model_dump(), "test": {"check": "p", "task_id": "1"}})
    the_plan = plan([decision("1", hypothesis="H1",
                              checks=[{"metric": "p", "op": "<", "value": 0.05}])],
                    hypotheses=[proposal.model_dump()])
    joined = adopt(tree(), the_plan)
    assert joined.get("H1").test == metric_test("p", "<", 0.05, task_id="1")
    missing = plan([decision("1", hypothesis="H1")], hypotheses=[proposal.model_dump()])
    with pytest.raises(ValueError, match="task 1 has no check on 'p'"):
        adopt(tree(), missing)


def test_adopt_keeps_the_studys_record_and_refuses_a_changed_one() -> None:
    decided = hypothesis("H1", status="refuted", decided_in=1)
    proposals = [hypothesis("H1").model_dump(), hypothesis("H2", parent="H1").model_dump()]
    joined = adopt(tree(decided), plan([decision("1", hypothesis="H2")], hypotheses=proposals))
    assert [(h.id, h.status) for h in joined.hypotheses] == [("H1", "refuted"), ("H2", "open")]
    changed = [hypothesis("H1", threshold=0.9).model_dump()]
    with pytest.raises(ValueError, match="H1: the plan says it differently"):
        adopt(tree(decided), plan([decision("1")], hypotheses=changed))
    orphan = [hypothesis("H3", parent="H9").model_dump()]
    with pytest.raises(ValueError, match="unknown parent 'H9'"):
        adopt(tree(), plan([decision("1")], hypotheses=orphan))


def test_acceptance_criteria_hold_only_when_all_hold() -> None:
    cycle = summary(1, outcome("1", auc=0.85, rows=120), outcome("2", status="failed"))
    both = [metric_test("auc", ">=", 0.8), metric_test("rows", ">=", 100)]
    held, why = criteria_hold(both, cycle)
    assert held
    assert why == "auc = 0.85 (task 1) >= 0.8; rows = 120 (task 1) >= 100"
    held, why = criteria_hold([metric_test("auc", ">=", 0.8), metric_test("rows", ">", 200)], cycle)
    assert not held
    assert why == "rows > 200 does not hold: rows = 120 (task 1), not > 200"
    assert criteria_hold([], cycle) == (False, "no acceptance criteria")
    assert not criteria_hold([metric_test("auc", ">=", 0.8, task_id="2")], cycle)[0]


# --- metrics with an interval (workflows.contracts.estimates) -------------------------------

GAIN = {"value": 0.01145, "ci": [-0.0075, 0.0328], "level": 0.95, "n": 442,
        "method": "bootstrap"}
"""The diabetes study's ridge gain: above 0.01 on its point, its interval includes 0.01."""


def estimate(value: float, low: float, high: float) -> dict[str, object]:
    return {"value": value, "ci": [low, high], "level": 0.95}


def gain_cycle(gain: object) -> CycleSummary:
    return summary(2, outcome("2", hypothesis="H1", r2_gain=gain))


def test_a_point_test_on_an_interval_that_includes_its_threshold_is_inconclusive() -> None:
    verdicts = judge(tree(hypothesis("H1", metric="r2_gain", threshold=0.01)), gain_cycle(GAIN))
    assert verdicts[0].status == "inconclusive"
    assert verdicts[0].reason == (
        "H1 inconclusive: the 95 % interval "
        "[-0.0075, 0.0328] of r2_gain (task 2) includes 0.01")
    [evidence] = verdicts[0].evidence
    assert (evidence.value, evidence.ci, evidence.level) == (0.01145, (-0.0075, 0.0328), 0.95)


@pytest.mark.parametrize(("low", "high", "status"), [
    (0.01, 0.03, "supported"),          # the whole interval at or above 0.01
    (0.0099, 0.03, "inconclusive"),     # its low end just under
    (-0.02, 0.0099, "refuted"),         # wholly below
    (-0.02, 0.01, "inconclusive"),      # its high end on the threshold: one value holds
])
def test_an_interval_is_judged_at_the_band_edges(low: float, high: float, status: str) -> None:
    gain = estimate(high, low, high)
    assert one(gain_cycle(gain), metric="r2_gain", threshold=0.01) == status


def test_a_test_may_name_a_bound_or_the_interval() -> None:
    assert one(gain_cycle(GAIN), metric="r2_gain.ci_low", threshold=0.01) == "refuted"
    assert one(gain_cycle(GAIN), metric="r2_gain.ci_high", threshold=0.01) == "supported"
    assert one(gain_cycle(GAIN), metric="r2_gain.value", threshold=0.01) == "supported"
    assert one(gain_cycle(GAIN), metric="r2_gain.ci", threshold=0.01) == "inconclusive"
    assert one(gain_cycle(GAIN), metric="r2_gain.ci", op="<", threshold=0.05) == "supported"


def test_a_bound_of_a_plain_number_is_inconclusive_and_says_so() -> None:
    verdicts = judge(tree(hypothesis("H1", metric="r2_gain.ci_low", threshold=0.01)),
                     gain_cycle(0.02))
    assert verdicts[0].status == "inconclusive"
    assert "task 2: r2_gain.ci_low has no ci_low to test" in verdicts[0].reason
    interval = judge(tree(hypothesis("H1", metric="r2_gain.ci", threshold=0.01)),
                     gain_cycle(0.02))
    assert interval[0].reason == "H1 inconclusive: task 2: r2_gain.ci has no interval to test"


def test_acceptance_on_an_interval_including_its_threshold_is_inconclusive_never_met() -> None:
    cycle = gain_cycle(GAIN)
    status, why = acceptance([metric_test("r2_gain", ">=", 0.01)], cycle)
    assert status == "inconclusive"
    assert "the 95 % interval [-0.0075, 0.0328] of r2_gain (task 2) includes 0.01" in why
    assert criteria_hold([metric_test("r2_gain", ">=", 0.01)], cycle)[0] is False
    assert acceptance([metric_test("r2_gain", ">=", 0.01),
                       metric_test("r2_gain.ci_low", ">=", 0.0)], cycle)[0] == "unmet"
    assert acceptance([metric_test("r2_gain.ci_high", ">=", 0.01)], cycle)[0] == "met"
    cleared = gain_cycle(estimate(0.03, 0.015, 0.045))
    assert acceptance([metric_test("r2_gain", ">=", 0.01)], cleared)[0] == "met"


def test_a_straddling_interval_beside_a_refuting_task_is_disagreement_not_undecided() -> None:
    cycle = summary(2, outcome("2", r2_gain=GAIN), outcome("3", r2_gain=0.001))
    status, why = acceptance([metric_test("r2_gain", ">=", 0.01)], cycle)
    assert status == "unmet"
    assert why.startswith("r2_gain >= 0.01 does not hold: evidence disagrees on >= 0.01: "
                          "r2_gain = 0.001 (task 3) does not hold; the 95 % interval")
