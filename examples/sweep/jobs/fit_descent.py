"""Fit ``y = w * x + b`` by plain gradient descent on the mean squared error.

A fixed number of steps from ``w = b = 0`` with learning rate ``--lr``: too small a rate stops
far from the least-squares line, a larger one (below the point where it diverges) gets close.
Standard library only. Writes ``fit.json`` (the parameters and the loss every few steps) and
``metrics.json`` (``r2``, ``loss``, ``w``, ``b``, ``lr``, ``steps``, ``rows``). With
``--interval=true`` the r² in ``metrics.json`` is an estimate with its 95 % bootstrap interval (rows
resampled with a fixed seed, the fitted line kept).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import statistics
import sys
from pathlib import Path

_DIVERGED = 100.0
"""How many times its starting value the loss may reach before the fit counts as diverged."""


def load(path: Path) -> tuple[list[float], list[float]]:
    """The ``x`` and ``y`` columns of the dataset."""
    if not path.is_file():
        sys.exit(f"{path} not found in {Path.cwd()}: the fit needs the data task's data.csv")
    xs: list[float] = []
    ys: list[float] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            xs.append(float(row["x"]))
            ys.append(float(row["y"]))
    if len(xs) < 3:
        sys.exit(f"{path} has {len(xs)} rows; a fit needs at least 3")
    return xs, ys


def mse(xs: list[float], ys: list[float], w: float, b: float) -> float:
    """Mean squared error of the line ``w * x + b``."""
    return statistics.fmean((w * x + b - y) ** 2 for x, y in zip(xs, ys, strict=True))


def descend(xs: list[float], ys: list[float], lr: float, steps: int
            ) -> tuple[float, float, list[list[float]]]:
    """``w``, ``b`` after ``steps`` steps, and ``[step, loss]`` every fifth step."""
    w = b = 0.0
    curve = [[0, mse(xs, ys, w, b)]]
    for step in range(1, steps + 1):
        residuals = [w * x + b - y for x, y in zip(xs, ys, strict=True)]
        grad_w = 2 * statistics.fmean(r * x for r, x in zip(residuals, xs, strict=True))
        grad_b = 2 * statistics.fmean(residuals)
        w, b = w - lr * grad_w, b - lr * grad_b
        loss = mse(xs, ys, w, b)
        if not math.isfinite(loss) or loss > _DIVERGED * curve[0][1]:
            sys.exit(f"the loss diverged with --lr={lr}: {curve[0][1]:.4g} at the start, "
                     f"{loss:.4g} at step {step}; lower the learning rate")
        if step % 5 == 0 or step == steps:
            curve.append([step, loss])
    return w, b, curve


def r2_interval(xs: list[float], ys: list[float], w: float, b: float,
                resamples: int = 400) -> list[float]:
    """The 95 % percentile bootstrap interval of the line's r² (rows resampled, seed 0)."""
    rng = random.Random(0)
    n, found = len(xs), []
    for _ in range(resamples):
        rows = [rng.randrange(n) for _ in range(n)]
        bx, by = [xs[i] for i in rows], [ys[i] for i in rows]
        found.append(1.0 - mse(bx, by, w, b) / statistics.pvariance(by))
    found.sort()
    return [round(found[int(0.025 * resamples)], 6), round(found[int(0.975 * resamples) - 1], 6)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="deps/data/data.csv")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--interval", choices=["true", "false"], default="false",
                        help="Write r² with its 95 %% bootstrap interval.")
    args = parser.parse_args()
    if not 0 < args.lr <= 10 or not 1 <= args.steps <= 100_000:
        sys.exit(f"--lr={args.lr} --steps={args.steps}: give 0 < lr <= 10 and 1 <= steps")

    xs, ys = load(Path(args.data))
    w, b, curve = descend(xs, ys, args.lr, args.steps)
    loss = mse(xs, ys, w, b)
    r2 = 1.0 - loss / statistics.pvariance(ys)
    metrics = {"r2": round(r2, 6), "loss": round(loss, 6), "w": round(w, 6), "b": round(b, 6),
               "lr": args.lr, "steps": args.steps, "rows": len(xs)}
    fit = {**metrics, "model": "y = w * x + b", "loss_curve": [[s, round(v, 6)] for s, v in curve]}
    Path("fit.json").write_text(json.dumps(fit, indent=2) + "\n", encoding="utf-8")
    if args.interval == "true":
        low, high = r2_interval(xs, ys, w, b)
        metrics["r2"] = {"value": round(r2, 6), "ci": [min(low, round(r2, 6)),
                                                       max(high, round(r2, 6))],
                         "level": 0.95, "n": len(xs), "method": "bootstrap"}
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(f"lr {args.lr}, {args.steps} steps: y = {w:.4f} x + {b:.4f}, r² = {r2:.4f}")


if __name__ == "__main__":
    main()
