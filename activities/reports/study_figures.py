"""The study's chart: its key metric across cycles, with each cycle's branch lines beside it.

The key metric is the study policy's (``StudyPolicy.key_metric``); a study without one is
charted on the metric most of its completed tasks reported (its direction taken from a branch
comparison on it, else higher is shown as better, and the report says so). Each cycle's
value is the best verified value of its main line (the summary's ``key_value`` when the
policy names the metric). A cycle that compared branches on that metric adds its lines as
points just right of the cycle, the line it kept drawn as a star. A cycle whose report could
not be read has no branch points; the Markdown says which and why. What keeps the chart honest
(each value's interval as a bar, the baseline, the acceptance thresholds, an axis from the
reference 0, and the caption saying so) is ``activities.reports.study_axis``.
"""

# matplotlib types its drawing calls' **kwargs as unknown, so every call would need an ignore:
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from activities.reports.branches import group_metric, groups, main_kept, text
from activities.reports.figures import FIGURES_FOLDER
from activities.reports.study_axis import draw_honest
from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import MAIN_LINE, BranchTree
from workflows.contracts.estimates import interval, number
from workflows.contracts.results import RunReport
from workflows.contracts.study import CycleSummary, StudyState

if TYPE_CHECKING:
    from matplotlib.axes import Axes

METRICS = "metrics.png"
NAME_CHARS = 24
"""The longest branch name written beside its point."""
NAMED_LINES = 4
"""A cycle with more branch lines than this has its points unnamed (the legend tells them)."""
LABELLED_CYCLES = 20
"""A study of more cycles has plain ticks: no decision under each, no branch names."""
_MAIN, _BRANCH, _KEPT, _CRITERION = "#1565c0", "#ef6c00", "#2e7d32", "#9e9e9e"


@dataclass(frozen=True)
class CycleFacts:
    """What the chart needs of one cycle: its completed tasks' numbers and its branches."""

    cycle: int
    tasks: list[dict[str, float]] = field(default_factory=list[dict[str, float]])
    """Each completed main-line task's finite numeric verified metrics (an estimate's value)."""
    intervals: list[dict[str, tuple[float, float]]] = field(
        default_factory=list[dict[str, tuple[float, float]]])
    """The same tasks' intervals, for the metrics written as estimates with one."""
    branches: BranchTree | None = None
    readable: bool = True
    """The cycle's report was read (when not, ``tasks`` come from its summary)."""


@dataclass(frozen=True)
class LinePoint:
    """One line of a branch comparison: the main line or a branch, its value, kept or not."""

    name: str
    value: float
    kept: bool
    interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class Chart:
    """The chart's data, which the Markdown describes beside it."""

    metric: Metric | None
    why: str
    """How the metric was chosen (or why there is none)."""
    values: dict[int, float | None]
    """Each cycle's value (None: no verified value in that cycle)."""
    lines: dict[int, list[LinePoint]]
    """Each cycle's branch lines compared on the metric (cycles with none left out)."""
    other_groups: int = 0
    """Branch comparisons on another metric, not drawn."""
    decisions: dict[int, str] = field(default_factory=dict[int, str])
    """Each decided cycle's action (``pivot``...), written under its tick."""
    intervals: dict[int, tuple[float, float]] = field(
        default_factory=dict[int, tuple[float, float]])
    """Each cycle's value's interval, where the task it came from wrote one."""
    caption: str = ""
    """What the chart shows and from which reference its axis starts (drawn under it)."""


def facts_of(summary: CycleSummary, report: RunReport | None) -> CycleFacts:
    """The chart's facts of a cycle: from its report when read, else from its summary."""
    if report is None:
        done: list[Mapping[str, object]] = [o.metrics for o in summary.tasks
                                            if o.status == "completed"]
        return CycleFacts(cycle=summary.cycle, readable=False, tasks=list(map(_numbers, done)),
                          intervals=list(map(_intervals, done)))
    done = [t.metrics for t in report.tasks if t.status == "completed" and t.branch is None]
    return CycleFacts(cycle=summary.cycle, branches=report.branches,
                      tasks=list(map(_numbers, done)), intervals=list(map(_intervals, done)))


def _numbers(metrics: Mapping[str, object]) -> dict[str, float]:
    """Each finite numeric metric's value (an estimate's point value)."""
    return {name: v for name, raw in metrics.items() if (v := number(raw)) is not None}


def _intervals(metrics: Mapping[str, object]) -> dict[str, tuple[float, float]]:
    return {name: ci for name, raw in metrics.items() if (ci := interval(raw)) is not None}


def choose_metric(state: StudyState, facts: list[CycleFacts]) -> tuple[Metric | None, str]:
    """The metric the chart follows, and how it was chosen."""
    if state.policy.key_metric is not None:
        return state.policy.key_metric, "the study's key metric"
    counts = Counter(name for f in facts for task in f.tasks for name in task)
    if not counts:
        return None, "no cycle reported a numeric verified metric"
    name = min(counts, key=lambda n: (-counts[n], n))
    compared = [m for f in facts if f.branches for members in groups(f.branches).values()
                if (m := group_metric(members)) is not None and m.name == name]
    if compared:
        return compared[0], (f"no key metric set: the metric most tasks reported "
                             f"({counts[name]}), {compared[0].direction}d as its branches were")
    return Metric(name=name), (f"no key metric set: the metric most tasks reported "
                               f"({counts[name]}); its direction is unknown, the highest value "
                               "of a cycle is shown")


def chart_of(state: StudyState, facts: list[CycleFacts]) -> Chart:
    """Each cycle's value of the chosen metric and its branch lines compared on it."""
    metric, why = choose_metric(state, facts)
    decisions = {s.cycle: s.decision.action for s in state.summaries if s.decision}
    if metric is None:
        return Chart(metric=None, why=why, values={f.cycle: None for f in facts}, lines={},
                     decisions=decisions)
    key = {s.cycle: s.key_value for s in state.summaries} \
        if state.policy.key_metric is not None else {}
    values: dict[int, float | None] = {}
    lines: dict[int, list[LinePoint]] = {}
    other = 0
    intervals: dict[int, tuple[float, float]] = {}
    for f in facts:
        values[f.cycle] = key.get(f.cycle) if key.get(f.cycle) is not None \
            else _best(metric, [t[metric.name] for t in f.tasks if metric.name in t])
        found = [ci.get(metric.name) for t, ci in zip(f.tasks, f.intervals, strict=False)
                 if t.get(metric.name) == values[f.cycle]]
        if (ci := next((c for c in found if c is not None), None)) is not None:
            intervals[f.cycle] = ci
        drawn, skipped = _lines(f.branches, metric)
        other += skipped
        if drawn:
            lines[f.cycle] = drawn
    return Chart(metric=metric, why=why, values=values, lines=lines, other_groups=other,
                 decisions=decisions, intervals=intervals)


def _best(metric: Metric, values: list[float]) -> float | None:
    if not values:
        return None
    return min(values) if metric.direction == "minimize" else max(values)


def _lines(tree: BranchTree | None, metric: Metric) -> tuple[list[LinePoint], int]:
    """The lines of ``tree``'s comparisons on ``metric``, and how many were on another."""
    if tree is None:
        return [], 0
    points: list[LinePoint] = []
    other = 0
    for group, members in groups(tree).items():
        compared = group_metric(members)
        if compared is None or compared.name != metric.name:
            other += 1
            continue
        main = tree.main.get(group)
        if main is not None and main.metric is not None:
            kept = main_kept(tree, group, final=True, choosing=False)
            points.append(LinePoint(name=MAIN_LINE, value=main.metric, kept=bool(kept),
                                    interval=main.interval))
        points += [LinePoint(name=b.name, value=b.score.metric, kept=b.selected,
                             interval=b.score.interval)
                   for b in members if b.score.metric is not None]
    return points, other


def draw_metrics(chart: Chart, folder: Path, *, criteria: list[tuple[str, float]]) -> str | None:
    """Draw ``chart`` to ``figures/metrics.png`` under ``folder``.

    Args:
        chart: the values to draw.
        folder: the study's report folder.
        criteria: acceptance thresholds on the chart's metric, as (label, value).

    Returns:
        The figure's path relative to ``folder``, or None for a study with no cycle yet.
    """
    if not chart.values:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 5.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    drawn = _draw_values(axes, chart)
    _draw_lines(axes, chart)
    for label, threshold in criteria:
        axes.axhline(threshold, color=_CRITERION, linestyle="--", linewidth=1.2,
                     label=f"acceptance: {text(label, 60)}")
    _label_axes(axes, chart)
    draw_honest(figure, axes, chart, criteria)
    if drawn or chart.lines:
        for text_item in axes.legend(loc="best", fontsize=9).get_texts():
            text_item.set_parse_math(False)
    else:
        axes.text(0.5, 0.5, text(chart.why if chart.metric is None else
                                 "no cycle reported this metric", 80),
                  transform=axes.transAxes, ha="center", va="center", color="#616161",
                  fontsize=12, parse_math=False)
    target = folder / FIGURES_FOLDER / METRICS
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="png")
    return target.relative_to(folder).as_posix()


def _draw_values(axes: Axes, chart: Chart) -> bool:
    """The cycles' values as a line; a cycle without one leaves a gap its neighbours join dotted.

    Returns:
        Whether any cycle had a value.
    """
    cycles = sorted(chart.values)
    ys = [chart.values[c] for c in cycles]
    present = [(c, y) for c, y in zip(cycles, ys, strict=True) if y is not None]
    if present and len(present) < len(ys):
        axes.plot([c for c, _ in present], [y for _, y in present], color=_MAIN,
                  linestyle=":", linewidth=1.2, alpha=0.7)
    if present:
        axes.plot(cycles, [math.nan if y is None else y for y in ys], color=_MAIN, marker="o",
                  linewidth=2, markersize=7,
                  label="best verified value of the cycle (its kept line)")
    for c, y in zip(cycles, ys, strict=True):
        if y is None and present:
            axes.text(c, 0.02, "no value", transform=axes.get_xaxis_transform(), ha="center",
                      fontsize=8, color="#616161")
    return bool(present)


def _label_axes(axes: Axes, chart: Chart) -> None:
    """Title, axis labels and ticks: each cycle with the decision after it, in a short study."""
    cycles = sorted(chart.values)
    name = text(chart.metric.name, 60) if chart.metric else "no metric"
    if chart.metric:
        axes.set_ylabel(f"{name} ({chart.metric.direction})", parse_math=False)
    else:
        axes.set_yticks([])
    axes.set_title(f"{name} across {len(cycles)} cycle(s) and their branches",
                   parse_math=False)
    if len(cycles) <= LABELLED_CYCLES:
        axes.set_xticks(cycles, [f"{c}\n{chart.decisions.get(c, '')}" for c in cycles])
        axes.set_xlabel("cycle (and the decision after it)")
    else:
        from matplotlib.ticker import MaxNLocator

        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("cycle")
    axes.set_xlim(cycles[0] - 0.5, cycles[-1] + 0.6)
    axes.grid(alpha=0.3)


def _draw_lines(axes: Axes, chart: Chart) -> None:
    """Each cycle's branch lines as points spread just right of the cycle, the kept one a star."""
    labelled: set[str] = set()
    for cycle, points in sorted(chart.lines.items()):
        step = 0.3 / max(len(points), 1)
        for n, point in enumerate(points):
            x = cycle + 0.1 + n * step
            kind = "kept line" if point.kept else \
                "main line in a branch comparison" if point.name == MAIN_LINE else "branch line"
            style = {"kept line": ("*", _KEPT, 16), "branch line": ("D", _BRANCH, 7),
                     "main line in a branch comparison": ("s", _MAIN, 7)}[kind]
            axes.plot([x], [point.value], linestyle="none", marker=style[0], color=style[1],
                      markersize=style[2], markeredgecolor="black", markeredgewidth=0.6,
                      label=None if kind in labelled else kind)
            labelled.add(kind)
            if len(points) <= NAMED_LINES and len(chart.values) <= LABELLED_CYCLES:
                axes.annotate(text(point.name, NAME_CHARS), (x, point.value),
                              textcoords="offset points", xytext=(5, 4), fontsize=8,
                              color="#424242", parse_math=False)
