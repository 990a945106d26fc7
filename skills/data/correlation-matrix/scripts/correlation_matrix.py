"""Correlate numeric columns of a CSV table pairwise (Pearson or Spearman).

Standard library only. Without ``--columns`` every numeric column that is not constant takes
part. Rows missing a value in any chosen column are left out (and counted). Writes
``correlations.json`` (the matrix and the pairs, strongest first) and ``metrics.json``.
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


def number(cell: str) -> float | None:
    """The finite number in ``cell``, or ``None`` (missing or not a number)."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Column names and rows of a CSV file; exits with a clear message on bad input."""
    if not path.is_file():
        sys.exit(f"input {path.name!r} not found in {Path.cwd()}: list it in the task's inputs")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        rows = [{k: (v or "").strip() for k, v in row.items() if k is not None}
                for row in reader]
        names = list(reader.fieldnames or [])
    if not rows:
        sys.exit(f"input {path.name!r} has no data rows")
    return names, rows


def numeric_columns(names: list[str], rows: list[dict[str, str]]) -> list[str]:
    """Columns whose present cells are all numbers and not all equal."""
    chosen: list[str] = []
    for name in names:
        cells = [row[name] for row in rows if row[name].lower() not in MISSING]
        values = [number(c) for c in cells]
        if cells and None not in values and len(set(values)) > 1:
            chosen.append(name)
    return chosen


def ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            out[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return out


def pearson(a: list[float], b: list[float]) -> float | None:
    """Pearson's r, or ``None`` when either side is constant."""
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    if saa == 0 or sbb == 0:
        return None
    return sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / math.sqrt(saa * sbb)


def columns_of(rows: list[dict[str, str]], chosen: list[str]) -> tuple[dict[str, list[float]], int]:
    """The chosen columns over complete rows (listwise deletion), and rows left out."""
    data: dict[str, list[float]] = {name: [] for name in chosen}
    dropped = 0
    for line, row in enumerate(rows, start=2):
        cells = [row[name] for name in chosen]
        if any(cell.lower() in MISSING for cell in cells):
            dropped += 1
            continue
        values = [number(cell) for cell in cells]
        for name, value, cell in zip(chosen, values, cells, strict=True):
            if value is None:
                sys.exit(f"line {line}: {name} = {cell!r} is not a number")
            data[name].append(value)
    return data, dropped


def main() -> None:
    """Correlate the columns and write ``correlations.json`` and ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data.csv", help="CSV file in the working directory")
    parser.add_argument("--columns", default="", help="comma-separated columns (default: all)")
    parser.add_argument("--method", default="pearson", choices=["pearson", "spearman"])
    args = parser.parse_args()

    names, rows = read_table(Path(args.data))
    chosen = [c.strip() for c in args.columns.split(",") if c.strip()] or numeric_columns(
        names, rows)
    unknown = [c for c in chosen if c not in names]
    if unknown:
        sys.exit(f"no column {unknown[0]!r}; columns: {', '.join(names)}")
    if len(chosen) < 2:
        sys.exit(f"need at least 2 numeric, non-constant columns; found {chosen or 'none'}")
    data, dropped = columns_of(rows, chosen)
    if len(data[chosen[0]]) < 3:
        sys.exit(f"only {len(data[chosen[0]])} complete rows; correlations need at least 3")
    if args.method == "spearman":
        data = {name: ranks(values) for name, values in data.items()}
    matrix: dict[str, dict[str, float | None]] = {a: {} for a in chosen}
    pairs: list[dict[str, object]] = []
    for i, a in enumerate(chosen):
        matrix[a][a] = 1.0
        for b in chosen[i + 1:]:
            r = pearson(data[a], data[b])
            matrix[a][b] = matrix[b][a] = None if r is None else round(r, 6)
            if r is not None:
                pairs.append({"a": a, "b": b, "r": round(r, 6)})
    pairs.sort(key=lambda p: -abs(float(str(p["r"]))))
    strongest = pairs[0] if pairs else {"a": "", "b": "", "r": 0.0}
    metrics = {
        "columns": len(chosen),
        "pairs": len(pairs),
        "rows_used": len(data[chosen[0]]),
        "dropped_rows": dropped,
        "max_abs_r": abs(float(str(strongest["r"]))),
        "strongest_pair": f"{strongest['a']}~{strongest['b']}" if pairs else "",
    }
    result = {"method": args.method, "columns": chosen, "matrix": matrix, "pairs": pairs,
              **metrics}
    Path("correlations.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    sys.stdout.write(f"{len(pairs)} {args.method} correlations over {metrics['rows_used']} "
                     f"rows; strongest {metrics['strongest_pair']} (|r| = "
                     f"{metrics['max_abs_r']:.3f})\n")


if __name__ == "__main__":
    main()
