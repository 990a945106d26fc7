"""Scoring: pass@k from n samples with c correct, and a results JSON against a reference."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from workers.evaluation.scoring import MISSING, judge, lookup, pass_at_k, score
from workers.evaluation.suite import Expect


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    """The share of all k-subsets of n samples (c correct) holding at least one correct."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(n, c, k) for n in range(1, 7)
                                           for c in range(n + 1) for k in range(1, n + 1)])
def test_pass_at_k_is_the_chance_a_random_k_subset_holds_a_correct_sample(
        n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))


def test_pass_at_1_is_the_share_correct_and_pass_at_n_is_any_correct() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 1, 10) == 1.0
    assert pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_pass_at_k_refuses_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


RESULTS: dict[str, Any] = {
    "status": "completed",
    "model": {"calls": 4},
    "tasks": [{"task_id": "describe", "metrics": {"n": 24}},
              {"task_id": "skill-1", "metrics": {"mean_difference": -1.036, "p_value": 0.2}},
              {"task_id": "fit", "status": "completed",
               "metrics": {"slope": 2.013, "p_value": 0.003, "label": "linear", "ok": True,
                           "bad": float("nan")}}],
}


def test_a_path_reaches_tasks_by_id_or_position_and_says_when_it_finds_nothing() -> None:
    assert lookup(RESULTS, "tasks.fit.metrics.slope") == 2.013
    assert lookup(RESULTS, "tasks.0.metrics.n") == 24
    assert lookup(RESULTS, "tasks.*.metrics.slope") == 2.013
    assert lookup(RESULTS, "tasks.*.metrics.difference|mean_difference") == -1.036
    assert lookup(RESULTS, "model.calls") == 4
    for path in ("tasks.missing.metrics.slope", "tasks.7", "status.deeper", "nope",
                 "tasks.fit.metrics.slope.more"):
        assert lookup(RESULTS, path) is MISSING, path


@pytest.mark.parametrize(("expect", "passed"), [
    ({"value": 2.0, "abs_tol": 0.02}, True),
    ({"value": 2.0, "abs_tol": 0.01}, False),
    ({"value": 2.0, "rel_tol": 0.01}, True),
    ({"value": 2.0, "rel_tol": 0.005}, False),
    ({"value": 2.0, "abs_tol": 0.001, "rel_tol": 0.01}, True),  # either tolerance suffices
    ({"value": 2.013}, True),
    ({"value": 2.0}, False),  # no tolerance: exact
    ({"op": ">", "value": 2.0}, True),
    ({"op": "<", "value": 2.0}, False),
])
def test_a_number_is_judged_within_its_tolerances_or_by_its_comparison(
        expect: dict[str, Any], passed: bool) -> None:
    verdict = judge(RESULTS, Expect.model_validate({"path": "tasks.fit.metrics.slope",
                                                    **expect}))
    assert verdict.passed is passed
    assert verdict.found == "2.013"


def test_strings_flags_missing_values_and_nan_are_judged_strictly() -> None:
    def passes(path: str, **kw: Any) -> bool:
        return judge(RESULTS, Expect.model_validate({"path": path, **kw})).passed

    assert passes("tasks.fit.metrics.label", value="linear")
    assert not passes("tasks.fit.metrics.label", value="quadratic")
    assert passes("tasks.fit.metrics.ok", value=True)
    assert not passes("tasks.fit.metrics.ok", value=1.0, abs_tol=0.5)  # a flag is no number
    assert not passes("tasks.fit.metrics.bad", value=0.0, abs_tol=1e9)
    assert not passes("tasks.fit.metrics.label", op="<", value=1)  # incomparable: fails
    missing = judge(RESULTS, Expect(path="tasks.fit.metrics.r2", value=0.9, abs_tol=0.1))
    assert (missing.passed, missing.found) == (False, "missing")
    assert missing.line() == "tasks.fit.metrics.r2 = missing (want 0.9 ± 0.1)"


def test_a_run_passes_only_when_every_part_of_its_reference_holds() -> None:
    expects = [Expect(path="status", value="completed"),
               Expect(path="tasks.fit.metrics.p_value", op="<", value=0.05),
               Expect(path="tasks.describe.metrics.n", value=25)]
    verdicts = score(RESULTS, expects)
    assert [v.passed for v in verdicts] == [True, True, False]


def test_a_wildcard_path_holds_when_any_task_holds_and_magnitude_ignores_the_sign() -> None:
    def verdict(**kw: Any) -> tuple[bool, str]:
        found = judge(RESULTS, Expect.model_validate(kw))
        return found.passed, found.found

    # two tasks report a p_value (0.2, then 0.003): the one that holds is shown
    assert verdict(path="tasks.*.metrics.p_value", op="<", value=0.05) == (True, "0.003")
    assert verdict(path="tasks.*.metrics.p_value", op="<", value=0.001) == (False, "0.2")
    difference = "tasks.*.metrics.difference|mean_difference"
    assert verdict(path=difference, value=1.036, abs_tol=0.001) == (False, "-1.036")
    assert verdict(path=difference, value=1.036, abs_tol=0.001, magnitude=True)[0]
    assert not verdict(path=difference, value=1.2, abs_tol=0.001, magnitude=True)[0]
