"""Rolling back retries: when a retry made a declared metric worse."""

from __future__ import annotations

from typing import Any

from workflows.contracts.plan import Check
from workflows.task.regression import regressed_metrics as regressed

P = Check(metric="p_value", op="<", value=0.05)
AUC = Check(metric="auc", op=">=", value=0.7)
EXACT = Check(metric="rows", op="==", value=100)


def test_no_regression_when_metrics_improve_or_hold() -> None:
    old = {"p_value": 0.04, "auc": 0.8, "rows": 100}
    new = {"p_value": 0.01, "auc": 0.9, "rows": 100}
    assert regressed(old, new, ["p_value", "auc"], [P, AUC, EXACT]) == []


def test_a_check_that_held_and_now_fails_is_a_regression() -> None:
    found = regressed({"auc": 0.8}, {"auc": 0.6}, ["auc"], [AUC])
    assert len(found) == 1 and "held before" in found[0] and "auc >= 0.7" in found[0]


def test_moving_the_wrong_way_is_a_regression_even_while_the_check_holds() -> None:
    found = regressed({"p_value": 0.01}, {"p_value": 0.03}, ["p_value"], [P])
    assert found == ["metric 'p_value' moved from 0.01 to 0.03; p_value < 0.05 wants it lower"]


def test_a_declared_metric_that_disappears_is_a_regression() -> None:
    found = regressed({"auc": 0.8, "rmse": 1.0}, {"auc": 0.8}, ["auc", "rmse"], [AUC])
    assert found == ["metric 'rmse' was reported before the retry (1.0) and is missing now"]


def test_metrics_without_a_direction_or_without_a_before_do_not_regress() -> None:
    assert regressed({"rows": 90}, {"rows": 120}, [], [EXACT]) == []  # no direction
    assert regressed({}, {"auc": 0.1}, ["auc"], [AUC]) == []
    assert regressed({"auc": "high"}, {"auc": "low"}, [], [AUC]) == []


GAIN = Check(metric="r2", op=">=", value=0.45)


def estimate(value: float, low: float, high: float) -> dict[str, Any]:
    return {"value": value, "ci": [low, high], "level": 0.95, "n": 442, "method": "cv"}


def test_an_estimate_is_judged_by_its_point_value() -> None:
    old, new = {"r2": estimate(0.49, 0.47, 0.51)}, {"r2": estimate(0.40, 0.38, 0.42)}
    assert regressed(old, new, ["r2"], [GAIN], estimates=True) == [
        "metric 'r2' held before the retry (0.49 [0.47, 0.51] 95 %) and now fails r2 >= 0.45 "
        "(0.4 [0.38, 0.42] 95 %)"]
    lower = {"r2": estimate(0.46, 0.455, 0.465)}
    assert regressed(old, lower, ["r2"], [GAIN], estimates=True) == [
        "metric 'r2' moved from 0.49 [0.47, 0.51] 95 % to 0.46 [0.455, 0.465] 95 %; "
        "r2 >= 0.45 wants it higher"]
    assert regressed(old, {"r2": 0.40}, ["r2"], [GAIN], estimates=True) != [], \
        "an estimate against a plain number is judged too"


def test_a_move_within_the_intervals_is_no_regression() -> None:
    old, new = {"r2": estimate(0.4897, 0.43, 0.55)}, {"r2": estimate(0.44, 0.39, 0.50)}
    assert regressed(old, new, ["r2"], [GAIN], estimates=True) == [], \
        "0.4897 lies in the new interval: a noisy re-run, not a worse one"
    assert regressed(old, {"r2": 0.44}, ["r2"], [GAIN], estimates=True) == []


def test_without_the_flag_estimates_are_not_judged_as_before() -> None:
    old, new = {"r2": estimate(0.49, 0.47, 0.51)}, {"r2": estimate(0.40, 0.38, 0.42)}
    assert regressed(old, new, ["r2"], [GAIN]) == []
