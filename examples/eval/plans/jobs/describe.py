"""Summary statistics of one numeric column (standard library only).

Writes ``metrics.json`` and ``result.json``: n, mean, sample sd, median, quartiles (the
inclusive method), min, max, skewness (adjusted Fisher-Pearson) and the median absolute
deviation.
"""

import argparse
import csv
import json
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
args = parser.parse_args()

with open(args.data, newline="", encoding="utf-8") as handle:
    xs = [float(row[args.column]) for row in csv.DictReader(handle)]
n, mean, sd = len(xs), statistics.fmean(xs), statistics.stdev(xs)
q1, median, q3 = statistics.quantiles(xs, n=4, method="inclusive")
m2 = sum((x - mean) ** 2 for x in xs) / n
m3 = sum((x - mean) ** 3 for x in xs) / n
skew = m3 / m2 ** 1.5 * (n * (n - 1)) ** 0.5 / (n - 2)
mad = statistics.median(abs(x - median) for x in xs)
metrics = {"n": n, "mean": mean, "sd": sd, "median": median, "q1": q1, "q3": q3,
           "min": min(xs), "max": max(xs), "skewness": skew, "mad": mad}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
