"""Estimates: the shape a job's metric with uncertainty must have, and how it is read."""

from __future__ import annotations

import pytest

from workflows.contracts.base import CheckOp
from workflows.contracts.estimates import (
    Estimate,
    estimate_of,
    estimate_problem,
    interval,
    judge_interval,
    number,
    part_of,
    point,
    shown,
    split_name,
)

GOOD = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "se": 0.033, "n": 442,
        "method": "bootstrap"}


def test_a_well_formed_estimate_reads_as_its_value_and_interval() -> None:
    assert estimate_problem("r2", GOOD) == ""
    assert point(GOOD) == 0.49
    assert number(GOOD) == 0.49
    assert interval(GOOD) == (0.421, 0.55)
    assert shown(GOOD) == "0.49 [0.421, 0.55] 95 %"
    assert part_of(GOOD, "ci_low") == 0.421
    assert part_of(GOOD, "ci_high") == 0.55
    assert part_of(GOOD, "se") == 0.033


def test_plain_values_read_as_before() -> None:
    assert point(0.5) == 0.5
    assert point("ok") == "ok"
    assert interval(0.5) is None
    assert part_of(0.5, "ci_low") is None
    assert part_of(0.5, "value") == 0.5
    assert number(True) is None
    assert estimate_problem("x", 0.5) == ""


def test_other_objects_are_left_alone() -> None:
    assert estimate_problem("per_class", {"a": 0.1, "b": 0.2}) == ""
    assert point({"a": 0.1}) is None


@pytest.mark.parametrize(("raw", "said"), [
    ({"value": "high"}, 'needs "value"'),
    ({"ci": [0.1, 0.2], "level": 0.95}, 'needs "value"'),
    ({"value": 0.5, "ci": [0.6, 0.4], "level": 0.95}, "low > high"),
    ({"value": 0.7, "ci": [0.4, 0.6], "level": 0.95}, "outside its interval"),
    ({"value": 0.5, "ci": [0.4, 0.6]}, 'needs its "level"'),
    ({"value": 0.5, "ci": [0.4, 0.6], "level": 95}, "between 0 and 1"),
    ({"value": 0.5, "ci": [0.4, 0.6], "level": 1.0}, "between 0 and 1"),
    ({"value": 0.5, "ci": [0.4], "level": 0.95}, "two finite numbers"),
    ({"value": 0.5, "n": 0}, '"n" must be a whole number >= 1'),
    ({"value": 0.5, "n": 4.5}, '"n" must be a whole number >= 1'),
    ({"value": 0.5, "se": -1}, '"se" must be a finite number >= 0'),
    ({"value": 0.5, "std": 0.1}, "unknown field(s) 'std'"),
])
def test_a_malformed_estimate_is_refused_naming_the_metric(raw: object, said: str) -> None:
    problem = estimate_problem("r2_gain", raw)
    assert problem.startswith("metric 'r2_gain'")
    assert said in problem
    assert point(raw) is None
    assert estimate_of(raw) is None


def test_a_value_on_its_interval_edge_is_inside() -> None:
    assert estimate_problem("x", {"value": 0.4, "ci": [0.4, 0.6], "level": 0.9}) == ""
    assert shown(Estimate(value=0.4, ci=(0.4, 0.6), level=0.975)) == "0.4 [0.4, 0.6] 97.5 %"


def test_a_test_name_reads_a_part_unless_the_metrics_hold_it_whole() -> None:
    assert split_name("r2.ci_low", {"r2": GOOD}) == ("r2", "ci_low")
    assert split_name("r2.ci", {"r2": GOOD}) == ("r2", "ci")
    assert split_name("r2.ci_low", {"r2.ci_low": 0.3}) == ("r2.ci_low", None)
    assert split_name("model.depth", {}) == ("model.depth", None)


@pytest.mark.parametrize(("low", "high", "op", "t", "judged"), [
    (0.01, 0.03, ">=", 0.01, "supported"),   # low exactly on the threshold
    (0.01, 0.03, ">", 0.01, "inconclusive"),  # ... but > needs it strictly above
    (-0.0075, 0.0328, ">=", 0.01, "inconclusive"),
    (-0.02, 0.0099, ">=", 0.01, "refuted"),
    (-0.02, 0.01, ">=", 0.01, "inconclusive"),  # high exactly on it: one value holds
    (-0.02, 0.01, ">", 0.01, "refuted"),
    (0.2, 0.3, "<=", 0.3, "supported"),
    (0.2, 0.3, "<", 0.3, "inconclusive"),
    (0.3, 0.4, "<", 0.3, "refuted"),
    (0.3, 0.4, "<=", 0.3, "inconclusive"),
    (0.31, 0.4, "<=", 0.3, "refuted"),
    (0.1, 0.2, "==", 0.15, "inconclusive"),
    (0.1, 0.2, "==", 0.25, "refuted"),
    (0.15, 0.15, "==", 0.15, "supported"),
    (0.1, 0.2, "!=", 0.25, "supported"),
    (0.1, 0.2, "!=", 0.2, "inconclusive"),
])
def test_judge_interval_at_the_band_edges(low: float, high: float, op: CheckOp, t: float,
                                          judged: str) -> None:
    assert judge_interval(low, high, op, t) == judged
