"""The study's chart is honest: intervals as bars, the baseline, thresholds, an axis from 0."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PIL import Image

from activities.reports.study_axis import baseline, caption, limits
from activities.reports.study_figures import Chart, CycleFacts, LinePoint, chart_of, draw_metrics
from workflows.contracts.alternatives import Metric
from workflows.contracts.study import StudyPolicy, StudyState

R2 = Metric(name="r2")
CRITERIA = [("r2 >= 0.5", 0.5)]


def chart() -> Chart:
    """The issue's study: 0.4881 to 0.4961 over three cycles, each with a wide interval."""
    return Chart(metric=R2, why="the study's key metric", values={1: 0.4881, 2: 0.4905, 3: 0.4961},
                 lines={2: [LinePoint("main", 0.4897, False, (0.43, 0.55)),
                            LinePoint("alpha-1", 0.4905, True, (0.431, 0.551))]},
                 intervals={1: (0.421, 0.55), 3: (0.43, 0.556)})


def test_the_axis_starts_from_0_and_holds_intervals_thresholds_and_baseline() -> None:
    low, high = limits(chart(), CRITERIA)
    assert low == 0.0 and 0.556 < high < 0.6  # not 0.488-0.496: a change is drawn to scale
    assert limits(replace(chart(), values={1: -2.0}, intervals={}, lines={}), [])[1] == 0.0
    assert baseline(chart()) == (0.4881, "cycle 1's value, 0.4881")
    nothing = replace(chart(), values={1: None, 2: 0.3})
    assert baseline(nothing) == (0.3, "cycle 2's value, 0.3")
    assert baseline(replace(chart(), values={1: None}))[1].startswith("0, the declared reference")


def test_the_caption_says_the_reference_the_baseline_thresholds_and_intervals() -> None:
    said = caption(chart(), CRITERIA)
    assert said.startswith("The value axis includes 0, the reference")
    assert "the baseline, cycle 1's value, 0.4881" in said
    assert "acceptance threshold" in said and "(4 value(s) have one)" in said
    bare = caption(replace(chart(), intervals={}, lines={}), [])
    assert "no value has an interval" in bare and "no acceptance threshold" in bare


def test_a_cycles_value_keeps_the_interval_its_task_wrote() -> None:
    state = StudyState(study_id="s", goal="g", policy=StudyPolicy())
    facts = [CycleFacts(cycle=1, tasks=[{"r2": 0.49}, {"r2": 0.3}],
                        intervals=[{"r2": (0.42, 0.55)}, {}]),
             CycleFacts(cycle=2, tasks=[{"r2": 0.5}], intervals=[{}])]
    drawn = chart_of(state, facts)
    assert drawn.values == {1: 0.49, 2: 0.5} and drawn.intervals == {1: (0.42, 0.55)}


def test_the_drawn_chart_has_bars_the_baseline_and_the_caption(tmp_path: Path) -> None:
    drawn = replace(chart(), caption=caption(chart(), CRITERIA))
    path = tmp_path / str(draw_metrics(drawn, tmp_path, criteria=CRITERIA))
    with Image.open(path) as image:
        colours = [c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20) or []
                   if isinstance(c, tuple)]
    for hexed in ("#6d4c41", "#424242"):  # the baseline, the interval bars and caption
        want = [int(hexed[i:i + 2], 16) for i in (1, 3, 5)]
        assert any(sum(abs(a - b) for a, b in zip(c, want, strict=True)) < 24
                   for c in colours), hexed
