"""What every reflection rule shares: the diagnosis it returns, knob names, and the scores.

A rule (see :mod:`activities.reflection.execution`, :mod:`activities.reflection.approval` and
:mod:`activities.reflection.evidence`) reads the structured fields of a failure and returns a
:class:`Diagnosis`; :mod:`activities.reflection.reflection` turns it into a guarded, scored
:class:`~workflows.contracts.executive.ReflectionNote`.
Confidence and risk follow the formulas of the
reflection design (confidence: base 0.50, +0.25 known pattern, +0.20 proven fix, +0.15 minimal
patch, -0.20 reviewer divergence, -0.15 after two attempts; risk: 0.05 per change, -0.20 for a
proven fix, +0.30 x (1 - confidence)). Risk then gates what confidence decided
(:func:`gated_decision`): a low-risk patch keeps its decision, a riskier one is at most retried
with logging, a high-risk one goes to a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workflows.contracts.executive import PatchChange, RetryDecision, retry_decision
from workflows.contracts.plan import Scalar

UNKNOWN_CONFIDENCE = 0.20
"""Confidence of a failure no rule recognises: a person has to look."""


@dataclass
class Diagnosis:
    """What a rule concluded about one failure.

    Attributes:
        root_cause: short machine name (``out_of_memory``, ``missing_artifact``...).
        likely_fix: short machine name or one sentence of what would fix it.
        reason: one sentence a person can act on.
        evidence: the facts the diagnosis rests on (structured fields first, then text).
        known: whether a rule recognised the pattern (the +0.25 of the confidence).
        changes: the job-spec patch the rule proposes (empty: none).
        relink: files the verification retry should look for (name -> what is missing).
        fixed_confidence: set for ``unknown``, which is not scored by the formula.
    """

    root_cause: str
    likely_fix: str
    reason: str
    evidence: list[str] = field(default_factory=list[str])
    known: bool = True
    changes: list[PatchChange] = field(default_factory=list[PatchChange])
    relink: dict[str, str] = field(default_factory=dict[str, str])
    fixed_confidence: float | None = None


def unknown(reason: str, evidence: list[str]) -> Diagnosis:
    """The fallback: nothing recognised, a person reviews it."""
    return Diagnosis(root_cause="unknown", likely_fix="manual_review", reason=reason,
                     evidence=evidence, known=False, fixed_confidence=UNKNOWN_CONFIDENCE)


def confidence_score(*, known_pattern: bool, proven_fix: bool, actions: int | None,
                     divergence: bool, attempt: int) -> float:
    """Retry confidence by the reflection formula, clamped to [0, 1].

    Args:
        known_pattern: a rule recognised the failure.
        proven_fix: semantic memory holds a rule that fixed this before.
        actions: changes in the patch (or files to relink); ``None`` when nothing is offered.
        divergence: the reviewers' verdicts disagreed.
        attempt: the attempt that failed (1-based).
    """
    score = 0.50
    score += 0.25 if known_pattern else 0.0
    score += 0.20 if proven_fix else 0.0
    score += 0.15 if actions is not None and actions <= 2 else 0.0
    score -= 0.20 if divergence else 0.0
    score -= 0.15 if attempt > 2 else 0.0
    # Rounded so that 0.50 + 0.20 + 0.15 is exactly 0.85 and lands on its threshold.
    return round(min(max(score, 0.0), 1.0), 4)


def risk_score(*, changes: int, from_memory: bool, confidence: float) -> float:
    """Patch risk: more changes and less confidence are riskier, a proven fix less so."""
    risk = 0.05 * changes - (0.20 if from_memory else 0.0) + 0.30 * (1.0 - confidence)
    return round(min(max(risk, 0.0), 1.0), 4)


RISK_LOW = 0.15
"""The highest risk still "low": an execution retry approves a patch of risk 0.15 unasked."""
RISK_HIGH = 0.30
"""Above it a patch is high-risk: more than the whole weight doubt has in the risk formula."""
_CAUTION: tuple[RetryDecision, ...] = ("retry", "retry_logged", "human", "defer")


def risk_ceiling(risk: float) -> RetryDecision:
    """The boldest decision a patch of ``risk`` may get: retried, logged, or a person's."""
    if risk <= RISK_LOW:
        return "retry"
    if risk <= RISK_HIGH:
        return "retry_logged"
    return "human"


def gated_decision(confidence: float, risk: float | None) -> RetryDecision:
    """Confidence's decision, made more cautious where the patch's risk asks for it.

    Args:
        confidence: the retry confidence (its thresholds: :func:`retry_decision`).
        risk: the patch's risk score; ``None`` when nothing is patched (a relink).
    """
    decided = retry_decision(confidence)
    if risk is None:
        return decided
    ceiling = risk_ceiling(risk)
    return ceiling if _CAUTION.index(ceiling) > _CAUTION.index(decided) else decided


# Work-size knobs, most telling first: halving a batch is the textbook answer to running out
# of memory; a generic ``n`` or ``size`` is the last resort.
WORK_SIZE_KNOBS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(^|_)(mini_?)?batch(_?size)?$"),
    re.compile(r"(^|_)(chunk|block|buffer|tile|window)(_?size)?$|^chunksize$|^blocksize$"),
    re.compile(r"^(n_?|num_?|max_?)?(samples?|rows|points|records|items)$|(^|_)sample_?size$"),
    re.compile(r"^(n|size)$"),
)
WORK_SIZE_EXAMPLES = "batch_size, chunk_size, block_size, n_samples or rows"

# Iteration knobs: what to cut when a job cannot be given more time.
ITERATION_KNOBS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^(n_?|num_?|max_?)?(iter|iters|iterations|epochs?|steps|rounds|trials"
               r"|permutations?|bootstraps?|resamples|simulations?|draws|estimators"
               r"|generations)$"),
    re.compile(r"^(n_?|num_?|max_?)?samples$"),
)
ITERATION_EXAMPLES = "iterations, epochs, n_permutations, n_iter, steps or n_samples"


def find_knob(args: dict[str, Scalar],
              patterns: tuple[re.Pattern[str], ...]) -> tuple[str, int | float] | None:
    """The first numeric argument matching the earliest pattern (arguments in plan order)."""
    for pattern in patterns:
        for name, value in args.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if pattern.search(name.lower().replace("-", "_")):
                return name, value
    return None


def halved(value: int | float) -> int | float | None:
    """Half of a work knob, or ``None`` when it cannot shrink (already 1, or a fraction)."""
    if value <= 1:
        return None
    if isinstance(value, int):
        return max(1, value // 2)
    return max(1.0, value / 2)


_QUOTED = re.compile(r"""['"`]([^'"`\s]{1,128})['"`]""")


def quoted_names(text: str) -> list[str]:
    """Names quoted in a message (``metric 'rmse' is not declared`` -> ``['rmse']``)."""
    return _QUOTED.findall(text)
