"""Confidence and risk formulas, the decision thresholds, and the regression check."""

from __future__ import annotations

import pytest

from activities.reflection.rules import confidence_score, risk_score
from workflows.contracts.executive import retry_decision


@pytest.mark.parametrize(("known", "proven", "actions", "divergence", "attempt", "expected",
                          "decision"), [
    (True, False, 1, False, 1, 0.90, "retry"),
    (False, True, 2, False, 1, 0.85, "retry"),            # exactly on the 0.85 threshold
    (True, False, 3, False, 1, 0.75, "retry_logged"),     # three changes: no minimal bonus
    (True, False, 2, True, 1, 0.70, "retry_logged"),      # exactly on the 0.70 threshold
    (True, False, 1, False, 3, 0.75, "retry_logged"),
    (False, False, 1, False, 1, 0.65, "human"),
    (True, False, 1, True, 3, 0.55, "human"),
    (False, True, 1, True, 3, 0.50, "human"),             # exactly on the 0.50 threshold
    (False, False, 1, True, 1, 0.45, "defer"),
    (False, False, None, True, 3, 0.15, "defer"),
    (True, True, 1, False, 1, 1.0, "retry"),              # 1.10, clamped
])
def test_confidence_formula_and_thresholds(known: bool, proven: bool, actions: int | None,
                                           divergence: bool, attempt: int, expected: float,
                                           decision: str) -> None:
    score = confidence_score(known_pattern=known, proven_fix=proven, actions=actions,
                             divergence=divergence, attempt=attempt)
    assert score == expected
    assert retry_decision(score) == decision


def test_attempt_two_is_not_yet_penalised() -> None:
    def score(attempt: int) -> float:
        return confidence_score(known_pattern=True, proven_fix=False, actions=1,
                                divergence=False, attempt=attempt)
    assert score(2) == 0.90
    assert score(3) == 0.75


def test_confidence_is_never_below_zero() -> None:
    assert confidence_score(known_pattern=False, proven_fix=False, actions=None,
                            divergence=True, attempt=9) == 0.15
    assert 0.0 <= confidence_score(known_pattern=False, proven_fix=False, actions=5,
                                   divergence=True, attempt=9) <= 1.0


@pytest.mark.parametrize(("changes", "memory", "confidence", "expected"), [
    (1, False, 0.90, 0.08),       # the seed's "low risk" OOM patch
    (2, False, 0.70, 0.19),
    (1, True, 0.90, 0.0),         # -0.12 clamped at zero
    (4, False, 0.0, 0.50),
    (30, False, 0.0, 1.0),        # clamped at one
])
def test_risk_formula(changes: int, memory: bool, confidence: float, expected: float) -> None:
    assert risk_score(changes=changes, from_memory=memory,
                      confidence=confidence) == pytest.approx(expected)
