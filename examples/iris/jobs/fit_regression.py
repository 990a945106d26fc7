"""Fit an ordinary least-squares line ``y ~ x`` and report slope, intercept and r².

Standard library only. Writes ``regression.json`` (the finding, with the slope's standard
error and a 95 % normal-approximation interval) and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path


def load_pairs(path: Path, x: str, y: str) -> tuple[list[float], list[float]]:
    """The ``x`` and ``y`` columns of a CSV file as floats."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    xs: list[float] = []
    ys: list[float] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            missing = [c for c in (x, y) if c not in row]
            if missing:
                sys.exit(f"input {path.name!r} has no column {missing[0]!r}")
            xs.append(float(row[x]))
            ys.append(float(row[y]))
    if len(xs) < 3:
        sys.exit(f"input {path.name!r} has {len(xs)} rows; a line with an error needs 3")
    return xs, ys


def ols(xs: list[float], ys: list[float]) -> dict[str, float]:
    """Least-squares slope and intercept, r², residual standard error and slope SE."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    if sxx == 0:
        sys.exit("x has no variance: a slope cannot be fitted")
    slope = sxy / sxx
    intercept = my - slope * mx
    residual = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    sigma = math.sqrt(residual / (len(xs) - 2))
    return {
        "n": len(xs),
        "slope": slope,
        "intercept": intercept,
        "r2": 1.0 - residual / syy,
        "pearson_r": sxy / math.sqrt(sxx * syy),
        "residual_se": sigma,
        "slope_se": sigma / math.sqrt(sxx),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="iris.csv")
    parser.add_argument("--x", default="petal_length")
    parser.add_argument("--y", default="petal_width")
    parser.add_argument("--min_r2", type=float, default=0.9)
    args = parser.parse_args()

    fit = ols(*load_pairs(Path(args.data), args.x, args.y))
    metrics = {k: (v if k == "n" else round(v, 6)) for k, v in fit.items()}
    half_width = 1.96 * fit["slope_se"]
    finding = {
        "hypothesis": f"{args.y} is a linear function of {args.x} (r² ≥ {args.min_r2})",
        "model": f"{args.y} = intercept + slope * {args.x}",
        "slope_ci95": [round(fit["slope"] - half_width, 6), round(fit["slope"] + half_width, 6)],
        "min_r2": args.min_r2,
        "supported": fit["r2"] >= args.min_r2,
        **metrics,
    }
    Path("regression.json").write_text(json.dumps(finding, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    line = f"{args.y} = {fit['intercept']:.4f} + {fit['slope']:.4f} * {args.x}"
    print(f"{line}, r² = {fit['r2']:.4f}")


if __name__ == "__main__":
    main()
