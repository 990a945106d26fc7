"""Least-squares line of y on x, with Pearson's r and Spearman's rho (standard library only).

Writes ``metrics.json`` and ``result.json``: slope, intercept, r2, the slope's standard
error, pearson_r, spearman_rho (ranks with ties averaged) and n.
"""

import argparse
import csv
import json
import math
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--x", required=True)
parser.add_argument("--y", required=True)
args = parser.parse_args()


def ranks(values):
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


with open(args.data, newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
xs = [float(r[args.x]) for r in rows]
ys = [float(r[args.y]) for r in rows]
n = len(xs)
fit = statistics.linear_regression(xs, ys)
r = statistics.correlation(xs, ys)
residuals = [y - (fit.intercept + fit.slope * x) for x, y in zip(xs, ys, strict=True)]
sxx = sum((x - statistics.fmean(xs)) ** 2 for x in xs)
se = math.sqrt(sum(e * e for e in residuals) / (n - 2) / sxx)
metrics = {"n": n, "slope": fit.slope, "intercept": fit.intercept, "r2": r * r,
           "slope_se": se, "pearson_r": r,
           "spearman_rho": statistics.correlation(ranks(xs), ranks(ys))}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
