"""Fail fast: repeated failed fixes or stalled cycles escalate to a pivot before the stop."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.workflows.study.factories import hypothesis, outcome, summary, tree
from workflows.contracts.alternatives import Metric
from workflows.contracts.study import (
    ESCALATE_AFTER_FIXES,
    ESCALATE_AFTER_STALLED,
    CycleDecision,
    CycleSummary,
    StudyPolicy,
)
from workflows.study.escalation import abandoned, escalation, failed_fixes, failing_lines
from workflows.study.rules import decide, stalled

TREE = tree(hypothesis("H1"), hypothesis("H2"), hypothesis("H1a", parent="H1"))
KEY = {"key_metric": Metric(name="auc")}


def policy(**fields: Any) -> StudyPolicy:
    return StudyPolicy.model_validate({"max_cycles": 20, **KEY, **fields})


def fixing(cycle: int, key: float, decided: CycleDecision | None) -> CycleSummary:
    """A cycle whose task on H1 failed (its key value given), with the decision after it."""
    made = summary(cycle, outcome("t1", status="failed", hypothesis="H1"), key_value=key)
    return made.model_copy(update={"decision": decided})


FIX_H1 = CycleDecision(action="fix", reason="fix: t1 failed", hypotheses=["H1"], fixes=["H1"])


def fixes_failed(times: int) -> list[CycleSummary]:
    """Cycles in which H1's fix failed ``times`` times in a row, the key metric improving in
    each (so the study is not stalled: only the failed fixes count)."""
    return [fixing(n + 1, 0.5 + n / 100, FIX_H1 if n < times else None)
            for n in range(times + 1)]


def test_the_thresholds_are_the_seed_fail_fast_defaults() -> None:
    assert (ESCALATE_AFTER_FIXES, ESCALATE_AFTER_STALLED) == (2, 2)
    assert (StudyPolicy().escalate_after_fixes, StudyPolicy().escalate_after_stalled) == (2, 2)


def test_failed_fixes_count_the_fix_decisions_in_a_row_of_a_line_that_fails_again() -> None:
    cycles = fixes_failed(3)
    assert failing_lines(cycles[-1]) == ["H1"]
    assert [failed_fixes(cycles[:n], "H1") for n in (1, 2, 3, 4)] == [0, 1, 2, 3]
    assert failed_fixes(cycles, "H2") == 0
    done = [*cycles[:-1], summary(4, outcome("t1", hypothesis="H1"))]
    assert failed_fixes(done, "H1") == 0


def test_one_failed_fix_below_the_threshold_is_fixed_again() -> None:
    got = decide(policy(), TREE, fixes_failed(1), 0.0)
    assert (got.action, got.fixes, got.escalated) == ("fix", ["H1"], False)


@pytest.mark.parametrize("times", [ESCALATE_AFTER_FIXES, ESCALATE_AFTER_FIXES + 1])
def test_failed_fixes_at_and_above_the_threshold_escalate_to_a_pivot(times: int) -> None:
    got = decide(policy(), TREE, fixes_failed(times), 0.0)
    assert (got.action, got.escalated, got.abandon, got.pursue) == ("pivot", True, ["H1"], "H2")
    assert got.reason.startswith(f"fail fast: the fixes of H1 failed in {times} cycles in a "
                                 "row (escalation after 2); abandon H1 and pursue H2: claim H2")
    assert got.hypotheses == ["H1", "H2"]


def test_a_policy_without_escalation_keeps_fixing() -> None:
    got = decide(policy(escalate_after_fixes=None), TREE, fixes_failed(3), 0.0)
    assert got.action == "fix"


def flat(count: int, decided: CycleDecision | None = FIX_H1) -> list[CycleSummary]:
    """``count`` cycles with the same failing task and key value: no progress after the
    first; every decision but the last's given."""
    return [fixing(n + 1, 0.6, decided if n < count - 1 else None) for n in range(count)]


def test_stalled_counts_the_cycles_in_a_row_without_progress_after_the_first() -> None:
    assert [stalled(policy(), flat(n)) for n in (1, 2, 3, 4)] == [0, 1, 2, 3]
    better = [*flat(3)[:-1], fixing(3, 0.7, None)]
    assert stalled(policy(), better) == 0


OTHER = CycleDecision(action="iterate", reason="go on")


def test_one_stalled_cycle_below_the_threshold_does_not_escalate() -> None:
    got = decide(policy(), TREE, flat(2, OTHER), 0.0)
    assert (got.action, got.escalated) == ("fix", False)


@pytest.mark.parametrize("count", [ESCALATE_AFTER_STALLED + 1, ESCALATE_AFTER_STALLED + 2])
def test_stalled_cycles_at_and_above_the_threshold_escalate_before_the_stop(count: int) -> None:
    got = decide(policy(no_progress_cycles=count - 1), TREE, flat(count, OTHER), 0.0)
    assert (got.action, got.escalated, got.abandon) == ("pivot", True, ["H1"])
    assert got.reason.startswith(f"fail fast: no progress in the last {count - 1} cycles (2 to "
                                 f"{count}; escalation after 2); abandon H1 and pursue H2")


def test_a_pivot_that_makes_no_progress_either_stops_the_study() -> None:
    escalated = decide(policy(), TREE, flat(3, OTHER), 0.0)
    cycles = [*flat(3, OTHER)[:-1], fixing(3, 0.6, escalated), fixing(4, 0.6, None)]
    got = decide(policy(), TREE, cycles, 0.0)
    assert got.action == "stop"
    assert got.reason.startswith("no progress in the last 2 cycles (3 to 4)")


def test_with_no_open_hypothesis_left_the_planner_is_asked_for_another_approach() -> None:
    only = tree(hypothesis("H1"))
    got = escalation(policy(), only, fixes_failed(2), stalled=0)
    assert got is not None and got.pursue is None
    assert got.reason.endswith("abandon H1 and no open hypothesis is left: propose an "
                               "alternative hypothesis or approach")


def test_the_tree_marks_what_an_escalation_abandons_and_no_longer_counts_it_open() -> None:
    got = decide(policy(), TREE, fixes_failed(2), 0.0)
    marked = abandoned(TREE, got, 3)
    assert marked.get("H1").abandoned_in == 3
    assert [h.id for h in marked.open()] == ["H2", "H1a"]
    assert abandoned(TREE, FIX_H1, 3) is TREE
    assert "abandoned_in" not in TREE.get("H1").model_dump()


def test_a_pivot_names_its_sibling_unless_it_is_an_escalation() -> None:
    with pytest.raises(ValidationError, match="unless it is an escalation"):
        CycleDecision(action="pivot", reason="r")
    with pytest.raises(ValidationError, match="is a pivot"):
        CycleDecision(action="fix", reason="r", escalated=True)
    assert CycleDecision(action="pivot", reason="r", escalated=True).pursue is None
