"""What keeps the study's chart honest: intervals, the baseline, thresholds, and its axis.

A change of 0.008 on an axis spanning 0.488 to 0.496 looks dramatic; the same change on an axis
from 0 is drawn to scale. So the chart's value axis always includes the reference 0, and with it
the baseline (the first cycle's value, else 0 as the declared reference), every acceptance
threshold on the metric and every interval drawn. Each value whose task wrote it as an estimate
with an interval gets a bar (the cycles' values and the branch lines' alike), and the caption
under the chart says all of this, so a reader knows what the distances mean.
"""

# matplotlib types its drawing calls' **kwargs as unknown, so every call would need an ignore:
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from activities.reports.numbers import number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from activities.reports.study_figures import Chart

REFERENCE = 0.0
"""The value the axis always includes (a change is drawn to scale from it)."""
PAD = 0.06
"""Room above and below what is drawn, as a share of its span."""
_BASELINE, _BAR = "#6d4c41", "#424242"


def baseline(chart: Chart) -> tuple[float, str]:
    """The baseline and what it is: the first cycle's value, else 0 as the declared reference."""
    first = next(((c, v) for c, v in sorted(chart.values.items()) if v is not None), None)
    if first is None:
        return REFERENCE, "0, the declared reference (no cycle has a value)"
    return first[1], f"cycle {first[0]}'s value, {number(first[1])}"


def limits(chart: Chart, criteria: list[tuple[str, float]]) -> tuple[float, float]:
    """The value axis: everything drawn, the baseline, the thresholds and the reference 0."""
    seen = [REFERENCE, baseline(chart)[0], *(t for _, t in criteria),
            *(v for v in chart.values.values() if v is not None),
            *(x for ci in chart.intervals.values() for x in ci),
            *(p.value for points in chart.lines.values() for p in points),
            *(x for points in chart.lines.values() for p in points if p.interval
              for x in p.interval)]
    low, high = min(seen), max(seen)
    span = (high - low) or 1.0
    return (low if low == REFERENCE else low - PAD * span,
            high if high == REFERENCE else high + PAD * span)


def caption(chart: Chart, criteria: list[tuple[str, float]]) -> str:
    """The caption: the axis's reference, the baseline, the thresholds and the intervals."""
    if chart.metric is None:
        return ""
    _, what = baseline(chart)
    barred = len(chart.intervals) + sum(p.interval is not None for points in chart.lines.values()
                                        for p in points)
    bars = (f"bars: the intervals the jobs wrote ({barred} value(s) have one)" if barred else
            "no value has an interval, so none is drawn: the distances carry no uncertainty")
    limits_ = "grey dashes: the acceptance threshold(s)" if criteria else \
        "no acceptance threshold on this metric"
    return (f"The value axis includes 0, the reference, so changes are drawn to scale; "
            f"brown dashes: the baseline, {what}; {limits_}; {bars}.")


def draw_honest(figure: Figure, axes: Axes, chart: Chart,
                criteria: list[tuple[str, float]]) -> None:
    """Bars for the intervals, the baseline line, the axis from 0 and the caption under it."""
    if chart.metric is None or not any(v is not None for v in chart.values.values()):
        return
    for cycle, (low, high) in sorted(chart.intervals.items()):
        value = chart.values[cycle]
        if value is not None:
            axes.errorbar([cycle], [value], yerr=[[value - low], [high - value]], fmt="none",
                          ecolor=_BAR, elinewidth=1.4, capsize=5, zorder=1)
    for cycle, points in sorted(chart.lines.items()):
        step = 0.3 / max(len(points), 1)
        for n, point in enumerate(points):
            if point.interval is not None:
                low, high = point.interval
                axes.errorbar([cycle + 0.1 + n * step], [point.value], fmt="none",
                              yerr=[[point.value - low], [high - point.value]], ecolor=_BAR,
                              elinewidth=1, capsize=3, zorder=1)
    value, what = baseline(chart)
    axes.axhline(value, color=_BASELINE, linestyle=(0, (6, 3)), linewidth=1.2,
                 label=f"baseline: {what}")
    axes.set_ylim(*limits(chart, criteria))
    figure.supxlabel("\n".join(textwrap.wrap(caption(chart, criteria), 150)), fontsize=8,
                     color="#424242")
