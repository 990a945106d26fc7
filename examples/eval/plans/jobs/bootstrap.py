"""A seeded percentile bootstrap interval for the mean of one column (standard library).

Writes ``metrics.json`` and ``result.json``: the mean and the interval's bounds.
"""

import argparse
import csv
import json
import random
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
parser.add_argument("--resamples", type=int, default=2000)
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--level", type=float, default=0.95)
args = parser.parse_args()

with open(args.data, newline="", encoding="utf-8") as handle:
    xs = [float(row[args.column]) for row in csv.DictReader(handle)]
rng = random.Random(args.seed)
means = sorted(statistics.fmean(rng.choices(xs, k=len(xs))) for _ in range(args.resamples))
tail = (1 - args.level) / 2
metrics = {"mean": statistics.fmean(xs), "ci_low": means[int(tail * args.resamples)],
           "ci_high": means[int((1 - tail) * args.resamples) - 1], "resamples": args.resamples}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
