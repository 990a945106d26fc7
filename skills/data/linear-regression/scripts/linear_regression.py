"""Fit the least-squares line ``y = intercept + slope * x`` over two columns of a CSV table.

Standard library only. Rows where either column is missing are left out (and counted). Writes
``regression.json`` (the fit, with standard errors, the slope's t-test and 95 % intervals from
Student's t distribution) and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-"})


def load_pairs(path: Path, x: str, y: str) -> tuple[list[float], list[float], int]:
    """The complete (x, y) pairs of the table, and how many rows were left out."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    xs: list[float] = []
    ys: list[float] = []
    dropped = 0
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        for column in (x, y):
            if column not in (reader.fieldnames or []):
                sys.exit(f"input {path.name!r} has no column {column!r}; columns: "
                         f"{', '.join(reader.fieldnames or [])}")
        for line, row in enumerate(reader, start=2):
            cells = [(row[x] or "").strip(), (row[y] or "").strip()]
            if any(cell.lower() in MISSING for cell in cells):
                dropped += 1
                continue
            try:
                xv, yv = float(cells[0]), float(cells[1])
            except ValueError:
                sys.exit(f"input {path.name!r} line {line}: {x} = {cells[0]!r}, {y} = "
                         f"{cells[1]!r}: both must be numbers")
            xs.append(xv)
            ys.append(yv)
    if len(xs) < 3:
        sys.exit(f"input {path.name!r} has {len(xs)} complete rows; a line with an error "
                 "needs at least 3")
    return xs, ys, dropped


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - incomplete_beta(b, a, 1.0 - x)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    tiny, f, c, d = 1e-300, 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            term = 1.0
        elif i % 2 == 0:
            term = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            term = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + term * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + term / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-14:
            break
    return math.exp(log_front) / a * (f - 1.0)


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t distribution with ``df`` degrees of freedom."""
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_critical(df: float, level: float = 0.95) -> float:
    """The t value whose two-sided p-value is ``1 - level`` (by bisection)."""
    low, high = 0.0, 1e6
    for _ in range(200):
        middle = (low + high) / 2
        if t_two_sided_p(middle, df) > 1.0 - level:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def ols(xs: list[float], ys: list[float]) -> dict[str, float]:
    """Slope, intercept, r², Pearson's r, standard errors and the slope's p-value."""
    n = len(xs)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    if sxx == 0:
        sys.exit("x is constant: a slope cannot be fitted")
    if syy == 0:
        sys.exit("y is constant: there is nothing to explain")
    slope = sxy / sxx
    intercept = my - slope * mx
    residual = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    sigma = math.sqrt(residual / (n - 2))
    slope_se = sigma / math.sqrt(sxx)
    t = slope / slope_se if slope_se > 0 else math.inf
    return {
        "n": n,
        "slope": slope,
        "intercept": intercept,
        "r_squared": 1.0 - residual / syy,
        "pearson_r": sxy / math.sqrt(sxx * syy),
        "residual_se": sigma,
        "slope_se": slope_se,
        "intercept_se": sigma * math.sqrt(1.0 / n + mx * mx / sxx),
        "slope_t": t,
        "slope_p_value": t_two_sided_p(t, n - 2) if math.isfinite(t) else 0.0,
    }


def main() -> None:
    """Fit the line and write ``regression.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    parser.add_argument("--x", default="x", help="the explanatory column")
    parser.add_argument("--y", default="y", help="the response column")
    args = parser.parse_args()

    xs, ys, dropped = load_pairs(Path(args.data), args.x, args.y)
    fit = ols(xs, ys)
    metrics: dict[str, float] = {k: v if k == "n" or not math.isfinite(v) else round(v, 6)
                                 for k, v in fit.items() if k != "slope_t"}
    metrics["dropped_rows"] = dropped
    crit = t_critical(fit["n"] - 2)
    finding = {
        "model": f"{args.y} = intercept + slope * {args.x}",
        "slope_ci95": [round(fit["slope"] - crit * fit["slope_se"], 6),
                       round(fit["slope"] + crit * fit["slope_se"], 6)],
        "intercept_ci95": [round(fit["intercept"] - crit * fit["intercept_se"], 6),
                           round(fit["intercept"] + crit * fit["intercept_se"], 6)],
        "slope_t": round(fit["slope_t"], 6) if math.isfinite(fit["slope_t"]) else None,
        **metrics,
    }
    Path("regression.json").write_text(json.dumps(finding, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"{args.y} = {fit['intercept']:.4g} + {fit['slope']:.4g} * {args.x}, "
                     f"r² = {fit['r_squared']:.4f} (n = {fit['n']:g})\n")


if __name__ == "__main__":
    main()
