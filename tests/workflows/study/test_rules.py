"""Go / no-go after a cycle: every rule, in its order, with a reason that names numbers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.workflows.study.factories import hypothesis, metric_test, outcome, summary, tree, verdict
from workflows.contracts.alternatives import Metric
from workflows.contracts.study import CycleSummary, StudyPolicy
from workflows.study.rules import decide, key_change, progress

TREE = tree(hypothesis("H1"), hypothesis("H2"), hypothesis("H1a", parent="H1"),
            hypothesis("H1b", parent="H1"))


def policy(**fields: Any) -> StudyPolicy:
    return StudyPolicy.model_validate({"max_cycles": 10, **fields})


def test_acceptance_criteria_met_stops_before_any_other_rule() -> None:
    last = summary(3, outcome("1", hypothesis="H1", auc=0.9), verdicts=[verdict("H1", "refuted")])
    got = decide(policy(max_cycles=3, acceptance=[metric_test("auc", ">", 0.85)]), TREE,
                 [summary(1), summary(2), last], spent_usd=1.0)
    assert (got.action, got.reason) == ("stop", "acceptance criteria met: auc = 0.9 (task 1) "
                                                 "> 0.85")
    assert got.by == "rules"


def test_the_cycle_limit_stops() -> None:
    got = decide(policy(max_cycles=2, acceptance=[metric_test("auc", ">", 0.95)]), TREE,
                 [summary(1), summary(2, outcome("1", auc=0.9))], 0.0)
    assert (got.action, got.reason) == ("stop", "cycle limit reached: 2 of 2 cycles run")


def test_the_budget_stops_when_spent() -> None:
    got = decide(policy(budget_usd=12.0), TREE, [summary(1)], spent_usd=12.4)
    assert (got.action, got.reason) == ("stop", "budget spent: $12.40 of $12.00")
    assert decide(policy(budget_usd=12.0), TREE, [summary(1)], 11.99).action == "iterate"


def stalled(*cycles: CycleSummary, **fields: Any) -> str:
    """The no-progress stop's reason (the escalation before it switched off: its own tests are
    in test_escalation.py)."""
    fields = {"escalate_after_stalled": None, **fields}
    got = decide(policy(key_metric=Metric(name="auc"), **fields), TREE, list(cycles), 0.0)
    return got.reason if got.action == "stop" else ""


def test_no_progress_in_two_cycles_stops_saying_what_did_not_move() -> None:
    failing = outcome("9", status="failed")
    reason = stalled(summary(1, failing, key_value=0.7), summary(2, failing, key_value=0.7),
                     summary(3, failing, key_value=0.69))
    assert reason == ("no progress in the last 2 cycles (2 to 3): no hypothesis decided, key "
                      "metric best 0.7 not improved (0.7, 0.69), unfinished tasks 1 → 1 → 1")


FAILING = outcome("9", status="failed")


@pytest.mark.parametrize(("last", "why"), [
    (summary(3, FAILING, verdicts=[verdict("H2", "refuted")], key_value=0.5),
     "hypothesis H2 decided"),
    (summary(3, FAILING, key_value=0.71), "key metric improved to 0.71"),
    (summary(3, key_value=0.5), "unfinished tasks down from 1 to 0"),
])
def test_any_progress_in_the_window_keeps_the_study_going(last: CycleSummary, why: str) -> None:
    first, second = summary(1, FAILING, key_value=0.7), summary(2, FAILING, key_value=0.6)
    assert stalled(first, second, last) == ""
    assert progress([first, second, last], 2, policy(key_metric=Metric(name="auc"))) == why


def test_no_progress_needs_its_window_plus_one_and_follows_the_metric_direction() -> None:
    assert stalled(summary(1), summary(2)) == ""
    lower = policy(key_metric=Metric(name="loss", direction="minimize"))
    runs = [summary(1, key_value=0.5), summary(2, key_value=0.4)]
    assert progress(runs, 1, lower) == "key metric improved to 0.4"
    assert progress(runs, 1, policy(key_metric=Metric(name="auc"))) == ""


def test_a_key_metric_better_within_the_intervals_is_no_improvement() -> None:
    best = summary(1, FAILING, key_value=0.4897, key_ci=(0.43, 0.55))
    tie = summary(2, FAILING, key_value=0.4905, key_ci=(0.42, 0.55))
    said = ("key metric 0.4905 [0.42, 0.55] vs best 0.4897 [0.43, 0.55]: within intervals, not "
            "an improvement")
    assert key_change([best], tie, policy(key_metric=Metric(name="r2"))) == (False, said)
    assert progress([best, tie], 1, policy(key_metric=Metric(name="r2"))) == ""
    reason = stalled(best, tie, summary(3, FAILING, key_value=0.48, key_ci=(0.41, 0.54)))
    assert reason == ("no progress in the last 2 cycles (2 to 3): no hypothesis decided, key "
                      f"metric best 0.4905 not improved (0.4905, 0.48; {said}), unfinished "
                      "tasks 1 → 1 → 1")


def test_a_key_metric_better_beyond_the_intervals_or_without_them_is_progress() -> None:
    key = policy(key_metric=Metric(name="r2"))
    best = summary(1, FAILING, key_value=0.49, key_ci=(0.47, 0.51))
    clear = summary(2, FAILING, key_value=0.55, key_ci=(0.52, 0.58))
    assert progress([best, clear], 1, key) == "key metric improved to 0.55 [0.52, 0.58]"
    plain = [summary(1, FAILING, key_value=0.4897), summary(2, FAILING, key_value=0.4905)]
    assert progress(plain, 1, key) == "key metric improved to 0.4905"


def test_a_failed_linked_task_asks_for_a_fix_with_its_diagnosis() -> None:
    failed = outcome("3", status="failed_final", hypothesis="H1").model_copy(
        update={"diagnosis": "KeyError: 'age'; likely fix: use column 'Age'"})
    got = decide(policy(), TREE, [summary(1, failed, outcome("4", hypothesis="H2", auc=0.9),
                                          verdicts=[verdict("H2", "supported")])], 0.0)
    assert got.action == "fix"
    assert got.hypotheses == ["H1"]
    assert got.reason == ("1 task unfinished — task 3 failed_final: KeyError: 'age'; likely "
                          "fix: use column 'Age'")


def test_an_inconclusive_hypothesis_asks_for_a_fix() -> None:
    got = decide(policy(), TREE, [summary(1, outcome("1", hypothesis="H1"),
                                          verdicts=[verdict("H1", "inconclusive", False)])], 0)
    assert (got.action, got.hypotheses) == ("fix", ["H1"])
    assert got.reason.startswith("1 hypothesis inconclusive — ")  # no "0 tasks unfinished"


def test_unlinked_failures_count_only_when_no_task_links_a_hypothesis() -> None:
    side = outcome("5", status="failed")
    linked = summary(1, side, outcome("1", hypothesis="H1", auc=0.5),
                     verdicts=[verdict("H1", "refuted")])
    assert decide(policy(), TREE, [linked], 0).action == "pivot"
    assert decide(policy(), TREE, [summary(1, side, outcome("6"))], 0).action == "fix"


def test_refuted_pivots_to_the_first_open_sibling() -> None:
    got = decide(policy(), TREE, [summary(1, verdicts=[verdict("H1a", "refuted")])], 0)
    assert (got.action, got.pursue, got.hypotheses) == ("pivot", "H1b", ["H1a", "H1b"])
    assert got.reason == "H1a refuted: auc = 0.7 (task 1); pivot to its sibling H1b: claim H1b"


def test_refuted_without_an_open_sibling_iterates_on_the_parent_or_stops_at_a_root() -> None:
    closed = TREE.replaced([hypothesis("H1b", parent="H1", status="refuted", decided_in=1),
                            hypothesis("H2", status="supported", decided_in=1)])
    child = decide(policy(), closed, [summary(2, verdicts=[verdict("H1a", "refuted")])], 0)
    assert (child.action, child.hypotheses) == ("iterate", ["H1a", "H1"])
    assert child.reason.endswith("no sibling of H1a is still open (H1b refuted in cycle 1): "
                                 "iterate on its parent H1 with another alternative")
    alone = tree(*TREE.hypotheses, hypothesis("H9", parent="H2"))
    only = decide(policy(), alone, [summary(2, verdicts=[verdict("H9", "refuted")])], 0)
    assert only.reason.endswith("H9 has no sibling: iterate on its parent H2 with another "
                                "alternative")
    root = decide(policy(), closed, [summary(2, verdicts=[verdict("H1", "refuted")])], 0)
    assert (root.action, root.hypotheses) == ("stop", ["H1"])
    assert root.reason.endswith("no open alternative hypothesis remains")


def test_supported_iterates_on_a_child_then_the_next_open_then_the_next_question() -> None:
    got = decide(policy(), TREE, [summary(1, verdicts=[verdict("H1", "supported")])], 0)
    assert (got.action, got.hypotheses) == ("iterate", ["H1", "H1a"])
    assert "iterate on its child H1a: claim H1a" in got.reason
    leaf = decide(policy(), TREE, [summary(1, verdicts=[verdict("H1a", "supported")])], 0)
    assert leaf.hypotheses == ["H1a", "H1"]
    assert "the next open hypothesis H1" in leaf.reason
    done = tree(hypothesis("H1", status="supported", decided_in=1))
    last = decide(policy(), done, [summary(1, verdicts=[verdict("H1", "supported")])], 0)
    assert last.reason.endswith("no open hypothesis left: iterate on the next question")


def test_nothing_decided_and_nothing_failed_iterates() -> None:
    got = decide(policy(), TREE, [summary(1, outcome("1"), outcome("2"))], 0)
    assert (got.action, got.reason) == (
        "iterate", "cycle 1: no hypothesis decided and every task completed (2 tasks): iterate")


def test_deciding_before_any_cycle_is_refused() -> None:
    with pytest.raises(ValueError, match="no cycle has run"):
        decide(policy(), TREE, [], 0)


GAIN = {"value": 0.01145, "ci": [-0.0075, 0.0328], "level": 0.95}
"""A gain above 0.01 on its point estimate, whose 95 % interval includes 0.01."""
STRADDLES = "the 95 % interval [-0.0075, 0.0328] of r2_gain (task 2) includes 0.01"


def test_an_inconclusive_acceptance_is_never_met_and_gathers_more_evidence() -> None:
    rules = policy(max_cycles=3, acceptance=[metric_test("r2_gain", ">=", 0.01)])
    got = decide(rules, TREE, [summary(1), summary(2, outcome("2", r2_gain=GAIN))], 0.0)
    assert got.action == "iterate"
    assert got.reason == (f"acceptance not established: r2_gain >= 0.01: "
                          f"{STRADDLES}; gather more evidence (another cycle)")


def test_an_inconclusive_acceptance_at_the_cycle_limit_stops_not_established() -> None:
    rules = policy(max_cycles=2, acceptance=[metric_test("r2_gain", ">=", 0.01)])
    got = decide(rules, TREE, [summary(1), summary(2, outcome("2", r2_gain=GAIN))], 0.0)
    assert got.action == "stop"
    assert got.reason.startswith("cycle limit reached: 2 of 2 cycles run; acceptance not "
                                 "established")
    assert STRADDLES in got.reason and "met" not in got.reason.replace("established", "")


def test_an_inconclusive_acceptance_is_said_beside_another_rules_decision() -> None:
    rules = policy(acceptance=[metric_test("r2_gain", ">=", 0.01)])
    last = summary(2, outcome("2", hypothesis="H1", r2_gain=GAIN),
                   verdicts=[verdict("H1", "refuted")])
    got = decide(rules, TREE, [summary(1), last], 0.0)
    assert got.action == "pivot" and got.pursue == "H2"
    assert got.reason.endswith(f"; acceptance not established: r2_gain >= 0.01: {STRADDLES}")


def test_an_interval_that_clears_the_threshold_meets_acceptance() -> None:
    rules = policy(acceptance=[metric_test("r2_gain", ">=", 0.01)])
    cleared = {"value": 0.03, "ci": [0.012, 0.05], "level": 0.95}
    got = decide(rules, TREE, [summary(1, outcome("2", r2_gain=cleared))], 0.0)
    assert (got.action, got.reason) == ("stop", "acceptance criteria met: r2_gain = 0.03 "
                                                "[0.012, 0.05] 95 % (task 2) >= 0.01")


def test_reasons_count_one_in_the_singular() -> None:
    one = decide(policy(), TREE, [summary(1, outcome("1"))], 0)
    assert one.reason == "cycle 1: no hypothesis decided and every task completed (1 task): iterate"
    limit = decide(policy(max_cycles=1), TREE, [summary(1, outcome("1"))], 0)
    assert limit.reason == "cycle limit reached: 1 of 1 cycle run"
    fix = decide(policy(), TREE, [summary(1, outcome("1", status="failed", hypothesis="H1"),
                                          verdicts=[verdict("H2", "inconclusive")])], 0)
    assert fix.reason.startswith("1 task unfinished, 1 hypothesis inconclusive — ")
