"""A time series' linear trend, its autocorrelations and its dominant period (standard library).

The trend is the least-squares slope per step; autocorrelations are of the detrended series;
the period is the lag in 2..max_lag with the highest autocorrelation. Writes ``metrics.json``
and ``result.json``.
"""

import argparse
import csv
import json
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
parser.add_argument("--max_lag", type=int, default=24)
parser.add_argument("--detrend", type=int, default=1)
args = parser.parse_args()

with open(args.data, newline="", encoding="utf-8") as handle:
    ys = [float(row[args.column]) for row in csv.DictReader(handle)]
ts = list(range(len(ys)))
fit = statistics.linear_regression(ts, ys)
rest = ([y - (fit.intercept + fit.slope * t) for t, y in zip(ts, ys, strict=True)]
        if args.detrend else ys)
mean = statistics.fmean(rest)
dev = [r - mean for r in rest]
total = sum(d * d for d in dev)
acf = {lag: sum(dev[i] * dev[i + lag] for i in range(len(dev) - lag)) / total
       for lag in range(1, args.max_lag + 1)}
period = max(range(2, args.max_lag + 1), key=acf.__getitem__)
metrics = {"n": len(ys), "trend": fit.slope, "intercept": fit.intercept, "lag1": acf[1],
           "period": period, "period_acf": acf[period]}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
