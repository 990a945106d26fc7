"""The comparator: sibling lines of work ranked on verified evidence, deterministically.

A line is the branch-point task and its downstream, as the main line or a branch ran them.
Lines are ordered by, in turn: every task completed; the share of declared checks that passed;
the key metric in its direction (a line without it comes after those with it); wall time;
model cost; sandbox CPU time; and the name, so equal lines always rank the same way. The
metric is the branch-point task's (the first of the line), where the variation is; failing
that, the last downstream task's whose verified metrics hold it as a number or an estimate
(its value ranks; its interval is kept for ties: ``workflows.branching.selection``). Pure
code: the workflow ranks, and the tests check the ranking, with the same function.
"""

from __future__ import annotations

from collections.abc import Sequence

from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import LineScore
from workflows.contracts.estimates import interval, number
from workflows.contracts.results import TaskResult


def score(tasks: Sequence[TaskResult], declared: int, metric: Metric | None) -> LineScore:
    """How one line did: ``tasks`` in plan order, ``declared`` checks its decisions name."""
    started = [t.started_at for t in tasks if t.started_at is not None]
    finished = [t.finished_at for t in tasks if t.finished_at is not None]
    wall = (max(finished) - min(started)).total_seconds() if started and finished else 0.0
    found = key_metric(tasks, metric)
    return LineScore(
        completed=bool(tasks) and all(t.status == "completed" for t in tasks),
        checks_passed=sum(c.passed for t in tasks for c in t.checks),
        checks_declared=declared,
        metric=number(found) if found is not None else None,
        interval=interval(found) if found is not None else None,
        wall_s=round(max(wall, 0.0), 3),
        cost_usd=round(sum(t.model.usage.cost_usd for t in tasks), 6),
        cpu_s=round(sum(t.execution.cpu_s for t in tasks if t.execution is not None), 3))


def key_metric(tasks: Sequence[TaskResult], metric: Metric | None) -> object:
    """The key metric as written (a number or an estimate), the branch point's or another's.

    The branch point's, else the last downstream task's holding it.

    ``None``: no completed task of the line has it as a finite number (or an estimate of one).
    """
    if metric is None:
        return None
    for task in [*tasks[:1], *reversed(tasks[1:])]:
        value = task.metrics.get(metric.name)
        if task.status == "completed" and number(value) is not None:
            return value
    return None


def rank(lines: dict[str, LineScore], metric: Metric | None) -> list[str]:
    """The lines' names, best first; each score's ``rank`` is set (1 for the best)."""
    sign = -1.0 if metric is None or metric.direction == "maximize" else 1.0

    def key(name: str) -> tuple[int, float, int, float, float, float, float, str]:
        s = lines[name]
        share = s.checks_passed / s.checks_declared if s.checks_declared else 1.0
        missing = s.metric is None
        return (0 if s.completed else 1, -share, 1 if missing else 0,
                0.0 if s.metric is None else sign * s.metric,
                s.wall_s, s.cost_usd, s.cpu_s, name)

    order = sorted(lines, key=key)
    for position, name in enumerate(order, start=1):
        lines[name].rank = position
    return order


def explain(order: list[str], lines: dict[str, LineScore], metric: Metric | None) -> str:
    """One line on why the first line ranks first (for events and the report)."""
    if not order:
        return "no line to compare"
    best = lines[order[0]]
    parts = ["completed" if best.completed else "not completed",
             f"{best.checks_passed}/{best.checks_declared} checks passed"]
    if metric is not None:
        shown = "missing" if best.metric is None else f"{best.metric:.4g}"
        if best.interval is not None:
            shown += f" [{best.interval[0]:.4g}, {best.interval[1]:.4g}]"
        parts.append(f"{metric.name} ({metric.direction}) {shown}")
    return f"{order[0]} ranks first of {len(order)}: {', '.join(parts)}"
