"""Flag outliers of one numeric column by Tukey's fences or by z-scores (standard library).

``--method iqr`` flags values beyond ``cut`` interquartile ranges outside the quartiles
(inclusive method); ``--method z`` flags values more than ``cut`` sample sds from the mean.
Writes ``metrics.json`` and ``result.json`` with the count and the flagged rows (from 0).
"""

import argparse
import csv
import json
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
parser.add_argument("--method", choices=["iqr", "z"], required=True)
parser.add_argument("--cut", type=float, required=True)
args = parser.parse_args()

with open(args.data, newline="", encoding="utf-8") as handle:
    xs = [float(row[args.column]) for row in csv.DictReader(handle)]
if args.method == "iqr":
    q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    low, high = q1 - args.cut * (q3 - q1), q3 + args.cut * (q3 - q1)
else:
    mean, sd = statistics.fmean(xs), statistics.stdev(xs)
    low, high = mean - args.cut * sd, mean + args.cut * sd
flagged = [i for i, x in enumerate(xs) if not low <= x <= high]
kept = [x for i, x in enumerate(xs) if i not in flagged]
metrics = {"outliers": len(flagged), "rows": flagged, "low": low, "high": high,
           "clean_mean": statistics.fmean(kept), "first_row": flagged[0] if flagged else -1,
           "last_row": flagged[-1] if flagged else -1}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
