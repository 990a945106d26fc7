"""Compare a numeric column between two groups: Welch's t-test and a permutation test.

Standard library only. Reads the CSV named by ``--data`` from the working directory; the
group of each row is in ``--group_column`` and the measurement in ``--value_column``. Without
``--group_a``/``--group_b`` the first two groups in the file are compared. The permutation test
makes no normality assumption and its seed is an argument, so the p-value is reproducible.
Writes ``comparison.json`` (the finding) and ``metrics.json``.
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

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-"})


def load_groups(path: Path, group_column: str, value_column: str) -> dict[str, list[float]]:
    """The values of ``value_column`` per group, in the order groups first appear."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    groups: dict[str, list[float]] = {}
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        for column in (group_column, value_column):
            if column not in (reader.fieldnames or []):
                sys.exit(f"input {path.name!r} has no column {column!r}; columns: "
                         f"{', '.join(reader.fieldnames or [])}")
        for line, row in enumerate(reader, start=2):
            group, cell = (row[group_column] or "").strip(), (row[value_column] or "").strip()
            if group.lower() in MISSING or cell.lower() in MISSING:
                continue
            try:
                value = float(cell)
            except ValueError:
                sys.exit(f"input {path.name!r} line {line}: {value_column} = {cell!r} is not "
                         "a number")
            if math.isfinite(value):
                groups.setdefault(group, []).append(value)
    return groups


def pick(groups: dict[str, list[float]], a: str, b: str) -> tuple[str, str]:
    """The two groups to compare: the named ones, or the first two found."""
    names = list(groups)
    a = a or next((n for n in names if n != b), "")
    b = b or next((n for n in names if n != a), "")
    for name in (a, b):
        if name not in groups:
            sys.exit(f"group {name!r} not found; groups: {', '.join(names) or '(none)'}")
        if len(groups[name]) < 2:
            sys.exit(f"group {name!r} has {len(groups[name])} values; each group needs 2")
    if a == b:
        sys.exit(f"both groups are {a!r}: name two different groups")
    return a, b


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


def welch(a: list[float], b: list[float]) -> tuple[float, float]:
    """Welch's t statistic and its Welch-Satterthwaite degrees of freedom."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        sys.exit("both groups are constant: the t statistic is undefined")
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return t, df


def permutation_p(a: list[float], b: list[float], permutations: int, seed: int) -> float:
    """Two-sided permutation p-value of the difference in means: (k + 1) / (n + 1)."""
    pooled, total = a + b, sum(a) + sum(b)
    observed = abs(statistics.fmean(a) - statistics.fmean(b))
    rng, extreme = random.Random(seed), 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        left = sum(pooled[: len(a)])
        difference = left / len(a) - (total - left) / len(b)
        extreme += abs(difference) >= observed - 1e-12  # equal sets may sum slightly apart
    return (extreme + 1) / (permutations + 1)


def main() -> None:
    """Compare the two groups and write ``comparison.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    parser.add_argument("--group_column", default="group")
    parser.add_argument("--value_column", default="value")
    parser.add_argument("--group_a", default="", help="first group (default: first found)")
    parser.add_argument("--group_b", default="", help="second group (default: second found)")
    parser.add_argument("--permutations", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    if args.permutations < 1:
        sys.exit("--permutations must be at least 1")

    groups = load_groups(Path(args.data), args.group_column, args.value_column)
    name_a, name_b = pick(groups, args.group_a, args.group_b)
    a, b = groups[name_a], groups[name_b]
    t, df = welch(a, b)
    pooled_sd = math.sqrt((statistics.variance(a) + statistics.variance(b)) / 2)
    difference = statistics.fmean(a) - statistics.fmean(b)
    metrics = {
        "n_a": len(a),
        "n_b": len(b),
        "mean_a": round(statistics.fmean(a), 6),
        "mean_b": round(statistics.fmean(b), 6),
        "mean_difference": round(difference, 6),
        "t_statistic": round(t, 6),
        "df": round(df, 3),
        "welch_p_value": t_two_sided_p(t, df),
        "p_value": permutation_p(a, b, args.permutations, args.seed),
        "cohens_d": round(difference / pooled_sd, 4) if pooled_sd > 0 else 0.0,
        "permutations": args.permutations,
    }
    finding = {
        "hypothesis": f"mean {args.value_column} differs between {name_a} and {name_b}",
        "test": "two-sided permutation test of the difference in means; Welch's t-test",
        "group_a": name_a,
        "group_b": name_b,
        "seed": args.seed,
        "alpha": args.alpha,
        "supported": metrics["p_value"] < args.alpha,
        **metrics,
    }
    Path("comparison.json").write_text(json.dumps(finding, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"{name_a} vs {name_b}: t = {t:.3f} (df {df:.1f}), "
                     f"permutation p = {metrics['p_value']:.3g}\n")


if __name__ == "__main__":
    main()
