"""Describe one numeric column of a CSV table: centre, spread, quartiles and shape.

Standard library only. Reads the CSV named by ``--data`` from the working directory and writes
``summary.json`` and ``metrics.json``. Missing cells (empty, NA, N/A, NaN, null, none, ``-``)
are counted and left out; any other cell that is not a number stops the job with its line.
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


def load_column(path: Path, column: str) -> tuple[list[float], int]:
    """The numbers of ``column`` and how many of its cells are missing."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    values: list[float] = []
    missing = 0
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if column not in (reader.fieldnames or []):
            sys.exit(f"input {path.name!r} has no column {column!r}; columns: "
                     f"{', '.join(reader.fieldnames or [])}")
        for line, row in enumerate(reader, start=2):
            cell = (row[column] or "").strip()
            if cell.lower() in MISSING:
                missing += 1
                continue
            try:
                value = float(cell)
            except ValueError:
                sys.exit(f"input {path.name!r} line {line}: {column} = {cell!r} is not a number")
            if math.isfinite(value):
                values.append(value)
            else:
                missing += 1
    if len(values) < 2:
        sys.exit(f"column {column!r} has {len(values)} numbers; a description needs at least 2")
    return values, missing


def describe(values: list[float]) -> dict[str, float]:
    """Mean, sd, standard error, quartiles, range and skewness of ``values``."""
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    n = len(values)
    skew = (sum((v - mean) ** 3 for v in values) / n) / (sd**3) if sd > 0 else 0.0
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "sem": sd / math.sqrt(n),
        "min": min(values),
        "q1": q1,
        "median": median,
        "q3": q3,
        "max": max(values),
        "iqr": q3 - q1,
        "skewness": skew,
    }


def main() -> None:
    """Describe the column and write ``summary.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    parser.add_argument("--column", default="value", help="the numeric column to describe")
    args = parser.parse_args()

    values, missing = load_column(Path(args.data), args.column)
    stats = describe(values)
    metrics: dict[str, float] = {k: (v if k == "n" else round(v, 6)) for k, v in stats.items()}
    metrics["missing"] = missing
    half = 1.96 * stats["sem"]
    summary = {
        "data": args.data,
        "column": args.column,
        "mean_ci95_normal": [round(stats["mean"] - half, 6), round(stats["mean"] + half, 6)],
        **metrics,
    }
    Path("summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"{args.column}: n = {stats['n']:g}, mean = {stats['mean']:.4g}, "
                     f"median = {stats['median']:.4g}\n")


if __name__ == "__main__":
    main()
