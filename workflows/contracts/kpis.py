"""A run's planning KPIs (reviewed after each cycle), and task estimates.

How many tasks of each priority completed (target: 80 % of HIGH), how close the plan's time
estimates came (``1 - |actual - estimated| / estimated``, target 70 %), whether the HIGH
tasks did block later work (priority calibration), and which tasks were stopped by
something the plan did not name (dependency correctness). ``activities.reports.kpis``
computes them; the run's results JSON and both reports carry them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from workflows.contracts.base import Model

HIGH_COMPLETION_TARGET = 0.80
ESTIMATION_TARGET = 0.70
ESTIMATE_SECONDS = {"time_s": 1.0, "duration_s": 1.0, "minutes": 60.0, "hours": 3600.0,
                    "compute_hours": 3600.0, "gpu_hours": 3600.0}
"""The keys of ``estimated_resources`` that estimate a task's time, and their unit in seconds;
the first present counts."""


def accuracy(estimated_s: float, actual_s: float) -> float:
    """The time estimate's accuracy, ``1 - |actual - estimated| / estimated``.

    Raises:
        ValueError: an estimate that is not positive.
    """
    if estimated_s <= 0:
        raise ValueError(f"an estimate must be positive, not {estimated_s}")
    return 1 - abs(actual_s - estimated_s) / estimated_s


def estimated_seconds(estimate: dict[str, Any] | None) -> float | None:
    """A task's estimated time in seconds from its ``estimated_resources`` (None: none)."""
    for key, scale in ESTIMATE_SECONDS.items():
        value = (estimate or {}).get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value) * scale
    return None


class Estimate(Model):
    """One task's time estimate against its actual time."""

    task_id: str
    kind: str = ""
    """The task's kind (``workflows.contracts.memory.task_type`` of its action)."""
    estimated_s: float
    actual_s: float
    accuracy: float
    """``1 - |actual - estimated| / estimated`` (below 0: off by more than it)."""


class Kpis(Model):
    """The planning KPIs of one run (one cycle of a study)."""

    completion: dict[str, dict[str, float]] = Field(default_factory=dict[str, dict[str, float]])
    """Per priority: total, completed and rate."""
    high_completion_met: bool | None = None
    """Whether ≥ 80 % of the HIGH tasks completed (None: no HIGH task)."""
    estimates: list[Estimate] = Field(default_factory=list[Estimate])
    estimation_accuracy: float | None = None
    """The mean accuracy over the tasks with an estimate and a time (None: none)."""
    estimation_met: bool | None = None
    accuracy_by_kind: dict[str, float] = Field(default_factory=dict[str, float])
    """The mean accuracy of each task kind's estimates (what recalibration reads)."""
    high_blocking: list[str] = Field(default_factory=list[str])
    """HIGH tasks that later work depended on (the calibration the seed asks for)."""
    high_not_blocking: list[str] = Field(default_factory=list[str])
    """HIGH tasks nothing depended on: possibly over-prioritised."""
    low_blocking: list[str] = Field(default_factory=list[str])
    """LOW tasks later work depended on: possibly under-prioritised."""
    planned_blocks: list[str] = Field(default_factory=list[str])
    """Tasks blocked by a planned dependency that did not complete."""
    unplanned_blockers: list[str] = Field(default_factory=list[str])
    """Tasks that did not complete although every planned dependency did: something the plan
    did not name stopped them."""
