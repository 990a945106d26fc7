"""Test whether two species differ in one measurement: Welch's t-test and a permutation test.

Standard library only. The permutation test makes no normality assumption; its seed is an
argument so the p-value is reproducible. Writes ``comparison.json`` (the finding) and
``metrics.json``.
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


def load_groups(path: Path, column: str, names: list[str]) -> list[list[float]]:
    """Values of ``column`` for each named group of the ``species`` column."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    groups: dict[str, list[float]] = {name: [] for name in names}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if column not in row:
                sys.exit(f"input {path.name!r} has no column {column!r}")
            if row["species"] in groups:
                groups[row["species"]].append(float(row[column]))
    for name, values in groups.items():
        if len(values) < 2:
            sys.exit(f"group {name!r} has {len(values)} rows in {path.name!r}; need at least 2")
    return [groups[name] for name in names]


def welch(a: list[float], b: list[float]) -> tuple[float, float]:
    """Welch's t statistic and its Welch-Satterthwaite degrees of freedom."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return t, df


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t distribution: I_{df/(df+t^2)}(df/2, 1/2)."""
    x, a, b = df / (df + t * t), df / 2.0, 0.5
    if x <= 0.0:
        return 0.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def permutation_p(a: list[float], b: list[float], permutations: int, seed: int) -> float:
    """Two-sided permutation p-value of the difference in means, (k + 1) / (n + 1)."""
    pooled, total, size = a + b, sum(a) + sum(b), len(a)
    observed = abs(statistics.fmean(a) - statistics.fmean(b))
    rng, extreme = random.Random(seed), 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        left = sum(pooled[:size])
        diff = left / size - (total - left) / len(b)
        extreme += abs(diff) >= observed - 1e-12  # tolerance: float sums of equal sets differ
    return (extreme + 1) / (permutations + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="iris.csv")
    parser.add_argument("--column", default="sepal_length")
    parser.add_argument("--group_a", default="setosa")
    parser.add_argument("--group_b", default="versicolor")
    parser.add_argument("--permutations", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1936)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()

    a, b = load_groups(Path(args.data), args.column, [args.group_a, args.group_b])
    t, df = welch(a, b)
    pooled_sd = math.sqrt((statistics.variance(a) + statistics.variance(b)) / 2)
    metrics = {
        "n_a": len(a),
        "n_b": len(b),
        "mean_difference": round(statistics.fmean(a) - statistics.fmean(b), 6),
        "t_statistic": round(t, 6),
        "df": round(df, 3),
        "welch_p_value": t_two_sided_p(t, df),
        "p_value": permutation_p(a, b, args.permutations, args.seed),
        "cohens_d": round((statistics.fmean(a) - statistics.fmean(b)) / pooled_sd, 4),
        "permutations": args.permutations,
    }
    finding = {
        "hypothesis": f"mean {args.column} differs between {args.group_a} and {args.group_b}",
        "test": "two-sided permutation test of the difference in means; Welch's t-test",
        "seed": args.seed,
        "alpha": args.alpha,
        "supported": metrics["p_value"] < args.alpha,
        **metrics,
    }
    Path("comparison.json").write_text(json.dumps(finding, indent=2) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"t = {t:.3f} (df {df:.1f}), permutation p = {metrics['p_value']:.2g}")


if __name__ == "__main__":
    main()
