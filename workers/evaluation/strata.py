"""Scores by stratum (overall, per level, per concept) and failures by cause.

A stratum's line averages its tasks' scores (each task weighs the same): pass@1, pass@k, wall
time (the median of each task's runs), and calls, tokens and cost per run. A task counts in
every concept it names (its topic when it names none). The causes line gives, per
configuration, the share of its failed runs each cause explains (``workers.evaluation.causes``).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workers.evaluation.causes import CAUSES
from workers.evaluation.runner import Sample
from workers.evaluation.suite import Suite

if TYPE_CHECKING:  # the report imports this module to render its tables
    from workers.evaluation.report import ConfigScore, TaskScore

STRATA_HEADERS = ["STRATUM", "TASKS", "PASS@1", "PASS@K", "TIME S", "CALLS", "TOKENS",
                  "COST $"]
CAUSE_HEADERS = ["CONFIGURATION", "FAILED", *(c.upper() for c in CAUSES)]


def strata(suite: Suite, config: ConfigScore) -> list[tuple[str, list[TaskScore]]]:
    """``all``, then ``level N`` for each level, then ``concept`` for each concept, in order."""
    by_id = {t.id: t for t in suite.tasks}
    scored = config.tasks
    groups: list[tuple[str, list[TaskScore]]] = [("all", list(scored))]
    for level in sorted({t.level for t in scored}):
        groups.append((f"level {level}", [t for t in scored if t.level == level]))
    concepts: dict[str, list[TaskScore]] = {}
    for t in scored:
        task = by_id.get(t.task)
        named = (task.concepts or ([task.topic] if task.topic else [])) if task else []
        for concept in named:
            concepts.setdefault(concept, []).append(t)
    groups += sorted(concepts.items())
    return groups


def strata_rows(suite: Suite, config: ConfigScore) -> list[list[str]]:
    """One row per stratum of a configuration."""
    rows: list[list[str]] = []
    for name, tasks in strata(suite, config):
        def mean(field: str, of: list[TaskScore] = tasks) -> float:
            return statistics.fmean(getattr(t, field) for t in of)

        rows.append([name, str(len(tasks)), f"{mean('pass1'):.2f}", f"{mean('passk'):.2f}",
                     f"{mean('seconds'):.1f}", f"{mean('calls'):.1f}",
                     f"{mean('tokens'):.0f}", f"{mean('cost'):.4f}"])
    return rows


def cause_rows(samples: Sequence[Sample]) -> list[list[str]]:
    """Per configuration: failed runs, and each cause's share of them."""
    rows: list[list[str]] = []
    for name in dict.fromkeys(s.configuration for s in samples):
        failed = [s for s in samples if s.configuration == name and not s.passed]
        shares = [sum(s.cause == c for s in failed) / len(failed) if failed else 0.0
                  for c in CAUSES]
        rows.append([name, str(len(failed)), *(f"{v:.0%}" for v in shares)])
    return rows
