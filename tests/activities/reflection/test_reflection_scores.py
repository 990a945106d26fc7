"""Confidence and risk formulas, the decision thresholds, and the regression check."""

from __future__ import annotations

import pytest

from activities.reflection.reflection import scored
from activities.reflection.rules import (
    Diagnosis,
    confidence_score,
    gated_decision,
    risk_ceiling,
    risk_score,
)
from workflows.contracts.executive import DiagnoseInput, PatchChange, retry_decision
from workflows.contracts.plan import JobSpec


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
    (1, False, 0.90, 0.08),       # a "low risk" OOM patch
    (2, False, 0.70, 0.19),
    (1, True, 0.90, 0.0),         # -0.12 clamped at zero
    (4, False, 0.0, 0.50),
    (30, False, 0.0, 1.0),        # clamped at one
])
def test_risk_formula(changes: int, memory: bool, confidence: float, expected: float) -> None:
    assert risk_score(changes=changes, from_memory=memory,
                      confidence=confidence) == pytest.approx(expected)


@pytest.mark.parametrize(("risk", "ceiling"), [
    (0.0, "retry"),
    (0.15, "retry"),              # an execution retry: risk 0.15, low, approved
    (0.1501, "retry_logged"),
    (0.30, "retry_logged"),
    (0.3001, "human"),
    (1.0, "human"),
])
def test_risk_bands_cap_the_decision(risk: float, ceiling: str) -> None:
    assert risk_ceiling(risk) == ceiling


@pytest.mark.parametrize(("confidence", "risk", "decision"), [
    (0.90, 0.08, "retry"),            # a low-risk OOM patch retries unasked
    (0.85, 0.15, "retry"),            # both on their edges
    (0.85, 0.1501, "retry_logged"),   # confident but above low risk: retried and logged
    (0.85, 0.30, "retry_logged"),
    (0.85, 0.3001, "human"),          # high risk goes to a person whatever the confidence
    (0.70, 0.15, "retry_logged"),     # risk never makes a decision bolder
    (0.70, 0.3001, "human"),
    (0.50, 0.0, "human"),
    (0.49, 0.0, "defer"),
    (0.49, 0.90, "defer"),            # deferring stays deferring
    (0.95, None, "retry"),            # no patch (a relink): confidence alone decides
])
def test_risk_with_confidence_decides(confidence: float, risk: float | None,
                                      decision: str) -> None:
    assert gated_decision(confidence, risk) == decision


def test_a_confident_patch_of_many_changes_goes_to_a_person() -> None:
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    spec = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                   args=dict.fromkeys(names, 2))
    req = DiagnoseInput(run_id="run-1", task_id="t1", kind="execution", attempt=1, job=spec)
    found = Diagnosis(root_cause="out_of_memory", likely_fix="shrink", reason="too big",
                      changes=[PatchChange(field=f"args.{n}", old_value=2, new_value=1)
                               for n in names])
    note = scored(req, found)
    # known pattern, five changes: confidence 0.75 (a logged retry); risk 0.25 + 0.075
    assert note.confidence == 0.75 and note.patch is not None
    assert note.patch.risk == pytest.approx(0.325)
    assert note.decision == "human" and "risk 0.33" in note.reason
