"""The skill library's scores and thresholds.

Utility for maintenance, the weighted confidence of a match, recency, the doubling
maintenance points and how far an outcome deviated from a skill's promise. Pure functions:
the workflow sandbox imports this module.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

from workflows.contracts.patterns import SkillMetrics

if TYPE_CHECKING:  # the skill library's contracts are not loaded for a score
    from workflows.contracts.patterns import Deviation
    from workflows.contracts.skills import SkillUse

EXTRACT_EVERY = 10
"""K: outcomes per extraction batch."""
FIRST_MAINTENANCE = 10
"""Maintenance runs at 10, 20, 40, 80… finished tasks (doubling)."""
PRUNE_FRACTION = 0.2
"""Alpha: the bottom share of patterns by utility that maintenance retires."""
MERGE_SIMILARITY = 0.85
"""θ_merge: same-type patterns at least this similar are offered to the merge judge."""
UNDECIDED_BAND = 0.05
"""Pairs of the same structure within this much below θ_merge are undecided: the structural
judge cannot tell, so with a model the merge judge decides; without one they stay apart."""
GRACE_RETRIEVALS = 3
"""A pattern is judged (may be pruned) only once retrieved this many times: utility is 0 for a
pattern never retrieved, which says nothing yet about a new, imported or built-in one."""
EPSILON = 0.01
"""ε of the utility score."""
TRIAL_USES = 5
"""Uses of a trial version before its measured success decides promotion or retirement."""
FLAG_AFTER_DEVIATIONS = 3
"""Consecutive major deviations after which a skill is taken back to review."""


def utility(metrics: SkillMetrics) -> float:
    """Maintenance's utility score: s/(u+ε) · log(1+u) · (1 + u/(r+ε)).

    Effectiveness (success per use), frequency (log of uses) and precision (uses per
    retrieval). A pattern never used scores 0.
    """
    r, u, s = metrics.retrieved, metrics.used, metrics.succeeded
    return s / (u + EPSILON) * math.log(1 + u) * (1 + u / (r + EPSILON))


def recency(last_used: datetime | None, now: datetime, *, half_life_days: float = 30.0) -> float:
    """1.0 for a pattern used just now, halving every ``half_life_days``; 0.5 if never used."""
    if last_used is None:
        return 0.5
    days = max((now - last_used).total_seconds(), 0.0) / 86400
    return 0.5 ** (days / half_life_days)


def match_confidence(similarity: float, precondition_match: float, metrics: SkillMetrics,
                     now: datetime, *, prior: float = 0.5) -> float:
    """The weighted confidence of a match.

    0.30 similarity + 0.30 preconditions + 0.25 historical success + 0.10 usage frequency
    (uses / 100, at most 1) + 0.05 recency. A pattern with no use and no extraction evidence
    yet (a built-in or imported one) counts ``prior`` as its historical success: the
    confidence the person or extraction that admitted it gave it.
    """
    known = metrics.used + metrics.evidence_successes + metrics.evidence_failures
    success = metrics.success_rate if known else prior
    score = (0.30 * max(0.0, min(similarity, 1.0)) + 0.30 * precondition_match
             + 0.25 * success + 0.10 * min(metrics.used / 100, 1.0)
             + 0.05 * recency(metrics.last_used, now))
    return round(score, 4)


def maintenance_due(finished: int, last_at: int) -> int | None:
    """The maintenance point reached at ``finished`` outcomes after one at ``last_at``.

    Points are 10, 20, 40, 80…; ``None`` when no new point has been reached.
    """
    point = FIRST_MAINTENANCE
    reached: int | None = None
    while point <= finished:
        if point > last_at:
            reached = point
        point *= 2
    return reached


def deviation(status: str, attempts: int, metrics: dict[str, object], artifacts: list[str],
              use: SkillUse) -> tuple[Deviation, str]:
    """How far a skill-supplied task's outcome strayed from the pattern's expectations.

    ``major``: the task did not complete; ``minor``: it completed, but needed more than one
    attempt or lacks an output the pattern expects; ``none`` otherwise.
    """
    if status != "completed":
        return "major", f"the task ended {status}"
    missing = ([m for m in use.expected_metrics if m not in metrics]
               + [a for a in use.expected_artifacts if a not in artifacts])
    if missing:
        return "minor", f"expected outputs missing: {', '.join(missing[:10])}"
    if attempts > 1:
        return "minor", f"completed after {attempts} attempts"
    return "none", ""
