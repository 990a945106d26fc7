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
from workflows.study.verdicts import adopt, apply, criteria_hold, judge

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
