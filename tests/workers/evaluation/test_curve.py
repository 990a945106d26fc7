"""A learning curve's points, its table and its figure, from samples in the order they ran."""

from __future__ import annotations

from pathlib import Path

from workers.evaluation.curve import curve_rows, points, write_curve
from workers.evaluation.runner import Sample


def sample(config: str, task: str, passed: bool, calls: int) -> Sample:
    return Sample(task=task, level=1, configuration=config, repeat=1, passed=passed,
                  calls=calls, cost_usd=calls / 100)


SAMPLES = [sample("learning", "a", False, 8), sample("learning", "b", True, 6),
           sample("learning", "c", True, 4), sample("learning", "d", True, 3),
           sample("no-learning", "a", False, 8), sample("no-learning", "b", True, 8),
           sample("no-learning", "c", False, 9), sample("no-learning", "d", True, 8)]


def test_the_pass_rate_is_cumulative_per_pass_in_the_order_tasks_ran() -> None:
    curve = points(SAMPLES)
    assert [(p.configuration, p.index, p.pass_rate) for p in curve[:4]] == [
        ("learning", 1, 0.0), ("learning", 2, 0.5), ("learning", 3, 2 / 3),
        ("learning", 4, 0.75)]
    assert [p.pass_rate for p in curve[4:]] == [0.0, 0.5, 1 / 3, 0.5]


def test_the_table_compares_each_half_of_the_order() -> None:
    assert curve_rows(points(SAMPLES)) == [
        ["learning", "4", "0.75", "7.0", "3.5", "0.0700", "0.0350"],
        ["no-learning", "4", "0.50", "8.0", "8.5", "0.0800", "0.0850"]]


def test_the_figure_and_the_points_are_written_beside_the_report(tmp_path: Path) -> None:
    image, lines = write_curve(tmp_path, SAMPLES, "suite: learning curve")
    assert image == tmp_path / "curve.png" and image.stat().st_size > 10_000
    assert (tmp_path / "curve.json").is_file()
    assert "| learning | 4 | 0.75 | 7.0 | 3.5 | 0.0700 | 0.0350 |" in lines
