"""Tidy a CSV file: trim cells, blank out missing-value markers, drop duplicate rows."""

import argparse
import csv
import json
from pathlib import Path

MARKERS = {"na", "n/a", "null", "none", "-", "?"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="input.csv")
    parser.add_argument("--out", default="tidy.csv")
    args = parser.parse_args()
    with open(args.data, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    trimmed = replaced = 0
    seen: set[tuple[str, ...]] = set()
    kept = []
    for row in body:
        clean = []
        for cell in row:
            value = cell.strip()
            trimmed += value != cell
            if value.lower() in MARKERS:
                value = ""
                replaced += 1
            clean.append(value)
        key = tuple(clean)
        if key not in seen:
            seen.add(key)
            kept.append(clean)
    with open(args.out, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *kept])
    metrics = {"rows_in": len(body), "rows_out": len(kept), "trimmed": trimmed,
               "replaced": replaced}
    Path("metrics.json").write_text(json.dumps(metrics))
    print(metrics)


if __name__ == "__main__":
    main()
