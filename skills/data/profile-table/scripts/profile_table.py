"""Profile a CSV table: rows, columns, missing values and a summary of every column.

Standard library only. Reads the CSV named by ``--data`` from the working directory and writes
``profile.json`` (one summary per column) and ``metrics.json``. A column is numeric when every
cell that is not missing reads as a number; missing cells are empty or NA, N/A, NaN, null,
none or ``-``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-"})


def read_table(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and data rows of a CSV file; exits with a clear message on bad input."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        rows = [row for row in reader if row]
    if not header:
        sys.exit(f"input {path.name!r} is empty: it needs a header row")
    if len(set(header)) != len(header):
        sys.exit(f"input {path.name!r} repeats a column name: {', '.join(header)}")
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            sys.exit(f"input {path.name!r} line {line} has {len(row)} cells; the header has "
                     f"{len(header)}")
    if not rows:
        sys.exit(f"input {path.name!r} has no data rows")
    return header, rows


def number(cell: str) -> float | None:
    """The finite number in ``cell``, or ``None``."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def summarise(cells: list[str]) -> dict[str, object]:
    """Missing count, distinct values and a numeric or text summary of one column."""
    present = [c.strip() for c in cells if c.strip().lower() not in MISSING]
    summary: dict[str, object] = {"missing": len(cells) - len(present),
                                  "distinct": len(set(present))}
    numbers = [number(c) for c in present]
    values = [v for v in numbers if v is not None]
    if present and len(values) == len(present):
        summary.update({
            "type": "numeric",
            "mean": round(statistics.fmean(values), 6),
            "sd": round(statistics.stdev(values), 6) if len(values) > 1 else 0.0,
            "min": min(values),
            "median": statistics.median(values),
            "max": max(values),
        })
    else:
        top = Counter(present).most_common(5)
        summary.update({"type": "text" if present else "empty",
                        "top": [{"value": v, "count": n} for v, n in top]})
    return summary


def main() -> None:
    """Profile the table and write ``profile.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    args = parser.parse_args()

    header, rows = read_table(Path(args.data))
    columns = {name: summarise([row[i] for row in rows]) for i, name in enumerate(header)}
    missing = sum(int(str(c["missing"])) for c in columns.values())
    complete = sum(all(cell.strip().lower() not in MISSING for cell in row) for row in rows)
    metrics = {
        "rows": len(rows),
        "columns": len(header),
        "missing_values": missing,
        "complete_rows": complete,
        "duplicate_rows": len(rows) - len({tuple(row) for row in rows}),
        "numeric_columns": sum(c["type"] == "numeric" for c in columns.values()),
        "text_columns": sum(c["type"] == "text" for c in columns.values()),
    }
    profile = {"data": args.data, **metrics, "column_summaries": columns}
    Path("profile.json").write_text(json.dumps(profile, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"profiled {len(rows)} rows x {len(header)} columns, "
                     f"{missing} missing values\n")


if __name__ == "__main__":
    main()
