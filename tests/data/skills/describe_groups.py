"""Row count and mean of a numeric column per group of a CSV table."""
import argparse
import csv
import json

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
parser.add_argument("--group", required=True)
args = parser.parse_args()
with open(args.data, newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
groups: dict[str, list[float]] = {}
for row in rows:
    groups.setdefault(row[args.group], []).append(float(row[args.column]))
means = {name: sum(values) / len(values) for name, values in sorted(groups.items())}
with open("summary.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "means": means}, out, indent=2)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "groups": len(means)}, out)
