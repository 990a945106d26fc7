"""Learning curves: a suite's tasks in a fixed order, with learning on and then off.

The ``learning`` pass runs every task once, one after another in the suite's order, with the
skill library and reflection memory on, so each run may use what the earlier ones left; the
``no-learning`` pass runs them again with both off (nothing is read from them or written to
them: a fresh library and memory). Per task index the curve gives each pass's cumulative pass
rate and each task's model calls and cost; ``curve.png`` draws the three, one line per pass.
The learning pass starts from whatever library and memory the stack has: give it a fresh data
directory to start from nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from client.assay import AssayClient
from workers.evaluation.configurations import Configuration
from workers.evaluation.report import markdown_table
from workers.evaluation.runner import Evaluation, Sample

PASSES = (Configuration("learning"), Configuration("no-learning", ("skills", "memory")))
CURVE_HEADERS = ["PASS", "TASKS", "PASS RATE", "CALLS 1ST HALF", "CALLS 2ND HALF",
                 "COST $ 1ST HALF", "COST $ 2ND HALF"]


@dataclass(frozen=True)
class Point:
    """One task of one pass: its index (from 1), result, and the pass rate so far."""

    configuration: str
    index: int
    task: str
    passed: bool
    pass_rate: float
    calls: int
    cost_usd: float


async def run_curve(evaluation: Evaluation, client: AssayClient,
                    done: Callable[[Configuration, list[Sample]], None]) -> list[Sample]:
    """Both passes, each task once and one at a time in the suite's order."""
    samples: list[Sample] = []
    for config in PASSES:
        mine = [await evaluation.sample_one(client, task, config)
                for task in evaluation.suite.tasks]
        done(config, mine)
        samples += mine
    return samples


def points(samples: Sequence[Sample]) -> list[Point]:
    """Every pass's points, in the order its tasks ran (skipped tasks have none)."""
    out: list[Point] = []
    for name in dict.fromkeys(s.configuration for s in samples):
        passed = 0
        mine = (s for s in samples if s.configuration == name and not s.skipped)
        for index, s in enumerate(mine, start=1):
            passed += s.passed
            out.append(Point(name, index, s.task, s.passed, passed / index, s.calls,
                             s.cost_usd))
    return out


def curve_rows(curve: Sequence[Point]) -> list[list[str]]:
    """Per pass: final pass rate, and mean calls and cost in each half of the order."""
    rows: list[list[str]] = []
    for name in dict.fromkeys(p.configuration for p in curve):
        mine = [p for p in curve if p.configuration == name]
        half = max(1, len(mine) // 2)
        first, second = mine[:half], mine[half:] or mine[:half]

        def mean(of: list[Point], field: str) -> float:
            return sum(getattr(p, field) for p in of) / len(of)

        rows.append([name, str(len(mine)), f"{mine[-1].pass_rate:.2f}",
                     f"{mean(first, 'calls'):.1f}", f"{mean(second, 'calls'):.1f}",
                     f"{mean(first, 'cost_usd'):.4f}", f"{mean(second, 'cost_usd'):.4f}"])
    return rows


def plot(curve: Sequence[Point], path: Path, title: str) -> Path:
    """``curve.png``: cumulative pass rate, calls and cost per task index, a line per pass."""
    import matplotlib

    matplotlib.use("Agg")  # no display
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    figure, axes = pyplot.subplots(3, 1, figsize=(8, 9), sharex=True)
    panels = [("pass_rate", "cumulative pass rate"), ("calls", "model calls"),
              ("cost_usd", "cost $")]
    for name, style in zip(dict.fromkeys(p.configuration for p in curve), ("o-", "s--"),
                           strict=False):
        mine = [p for p in curve if p.configuration == name]
        x = [p.index for p in mine]
        for axis, (field, _label) in zip(axes, panels, strict=True):
            axis.plot(x, [getattr(p, field) for p in mine], style, label=name)
    for axis, (_field, label) in zip(axes, panels, strict=True):
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylim(-0.05, 1.05)
    for axis in axes[1:]:
        axis.set_ylim(bottom=0)  # a flat line stays flat, not a zoomed-in slope
    axes[0].legend()
    axes[0].set_title(title)
    axes[-1].set_xlabel("task index (suite order)")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.tight_layout()
    figure.savefig(str(path), dpi=100)  # pyright: ignore[reportUnknownMemberType]
    pyplot.close(figure)
    return path


def write_curve(folder: Path, samples: Sequence[Sample], title: str) -> tuple[Path, list[str]]:
    """``curve.png`` and ``curve.json`` in ``folder``; the report's lines about them."""
    folder.mkdir(parents=True, exist_ok=True)
    curve = points(samples)
    (folder / "curve.json").write_text(json.dumps([asdict(p) for p in curve], indent=2) + "\n",
                                       encoding="utf-8")
    image = plot(curve, folder / "curve.png", title)
    lines = ["## Learning curve", "", f"![learning curve]({image.name})", "",
             *markdown_table(CURVE_HEADERS, curve_rows(curve)), "",
             "Each task ran once per pass, in the suite's order: `learning` with the skill "
             "library and memory on, `no-learning` with both off. The pass rate is "
             "cumulative; calls and cost are per task (`curve.json` has every point).", ""]
    return image, lines
