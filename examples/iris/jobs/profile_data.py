"""Profile the iris table: row count, missing values and per-species summary statistics.

Standard library only. Reads the CSV named by ``--data`` from the working directory and
writes ``profile.json`` (the per-species summary) and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path


def read_table(path: Path, label: str) -> list[dict[str, str]]:
    """All rows of a CSV file; exits with a clear message when it is missing or empty."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        sys.exit(f"input {path.name!r} has no data rows")
    if label not in rows[0]:
        sys.exit(f"input {path.name!r} has no column {label!r}; columns: {', '.join(rows[0])}")
    return rows


def summarise(values: list[float]) -> dict[str, float]:
    """Mean, sample standard deviation, minimum and maximum, rounded for reading."""
    return {
        "mean": round(statistics.fmean(values), 4),
        "sd": round(statistics.stdev(values), 4),
        "min": min(values),
        "max": max(values),
    }


def profile(rows: list[dict[str, str]], label: str) -> tuple[dict[str, object], int]:
    """Per-group summaries of every numeric column, and the number of missing cells."""
    columns = [c for c in rows[0] if c != label]
    missing = 0
    groups: dict[str, dict[str, list[float]]] = {}
    sizes: dict[str, int] = {}
    for row in rows:
        group = groups.setdefault(row[label], {c: [] for c in columns})
        sizes[row[label]] = sizes.get(row[label], 0) + 1
        for column in columns:
            cell = (row[column] or "").strip()
            try:
                value = float(cell)
            except ValueError:
                missing += 1
                continue
            if math.isnan(value):
                missing += 1
            else:
                group[column].append(value)
    summary: dict[str, object] = {
        name: {"n": sizes[name], **{c: summarise(v) for c, v in cols.items()}}
        for name, cols in sorted(groups.items())
    }
    return summary, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="iris.csv", help="CSV file in the working directory")
    parser.add_argument("--label", default="species", help="column holding the group name")
    args = parser.parse_args()

    rows = read_table(Path(args.data), args.label)
    summary, missing = profile(rows, args.label)
    Path("profile.json").write_text(json.dumps(
        {"data": args.data, "rows": len(rows), "groups": summary}, indent=2) + "\n")
    metrics = {
        "rows": len(rows),
        "columns": len(rows[0]),
        "species": len(summary),
        "missing_values": missing,
    }
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"profiled {len(rows)} rows in {len(summary)} groups, {missing} missing values")


if __name__ == "__main__":
    main()
