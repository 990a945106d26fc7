"""Flag outliers of a numeric column by Tukey's rule: outside [Q1 - k·IQR, Q3 + k·IQR].

Standard library only. Quartiles are the inclusive (type 7) ones. Missing cells are counted
and left out. Writes ``outliers.json`` (the fences and each outlier's line and value) and
``metrics.json``.
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
LISTED = 1000
"""Outliers listed one by one in ``outliers.json`` at most (all are counted)."""


def load_column(path: Path, column: str) -> tuple[list[tuple[int, float]], int]:
    """(line, value) of every number in ``column``, and how many cells are missing."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    values: list[tuple[int, float]] = []
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
            if not math.isfinite(value):
                missing += 1
                continue
            values.append((line, value))
    if len(values) < 4:
        sys.exit(f"column {column!r} has {len(values)} numbers; quartiles need at least 4")
    return values, missing


def main() -> None:
    """Find the outliers and write ``outliers.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    parser.add_argument("--column", default="value", help="the numeric column to screen")
    parser.add_argument("--k", type=float, default=1.5, help="fence width in IQRs")
    args = parser.parse_args()
    if not args.k > 0:
        sys.exit("--k must be positive")

    values, missing = load_column(Path(args.data), args.column)
    q1, _, q3 = statistics.quantiles([v for _, v in values], n=4, method="inclusive")
    iqr = q3 - q1
    low, high = q1 - args.k * iqr, q3 + args.k * iqr
    flagged = [(line, v) for line, v in values if v < low or v > high]
    metrics = {
        "n": len(values),
        "missing": missing,
        "outliers": len(flagged),
        "outlier_share": round(len(flagged) / len(values), 6),
        "q1": round(q1, 6),
        "q3": round(q3, 6),
        "lower_fence": round(low, 6),
        "upper_fence": round(high, 6),
    }
    report = {
        "column": args.column,
        "k": args.k,
        "rule": "outside [Q1 - k*IQR, Q3 + k*IQR]",
        **metrics,
        "listed": [{"line": line, "value": v,
                    "side": "low" if v < low else "high"} for line, v in flagged[:LISTED]],
    }
    Path("outliers.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"{len(flagged)} of {len(values)} values of {args.column} outside "
                     f"[{low:.4g}, {high:.4g}]\n")


if __name__ == "__main__":
    main()
