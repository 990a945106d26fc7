"""Pearson's chi-square test of independence of two binary-or-categorical columns (stdlib).

No continuity correction; for one degree of freedom the p-value is erfc(sqrt(chi2 / 2)), for
more it is the upper tail of the chi-square distribution (series of the incomplete gamma).
Writes ``metrics.json`` and ``result.json`` with chi2, df, p_value and each row's rate of the
second column's largest value.
"""

import argparse
import csv
import json
import math

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--row", required=True)
parser.add_argument("--col", required=True)
args = parser.parse_args()

with open(args.data, newline="", encoding="utf-8") as handle:
    pairs = [(r[args.row], r[args.col]) for r in csv.DictReader(handle)]
rows, cols = sorted({a for a, _ in pairs}), sorted({b for _, b in pairs})
count = {(a, b): sum(1 for p in pairs if p == (a, b)) for a in rows for b in cols}
n = len(pairs)
chi2 = 0.0
for a in rows:
    for b in cols:
        expected = sum(count[a, c] for c in cols) * sum(count[r, b] for r in rows) / n
        chi2 += (count[a, b] - expected) ** 2 / expected
df = (len(rows) - 1) * (len(cols) - 1)
if df == 1:
    p = math.erfc(math.sqrt(chi2 / 2))
else:
    k, x = df / 2, chi2 / 2
    term = total = 1.0 / k
    for i in range(1, 1000):
        term *= x / (k + i)
        total += term
    p = 1.0 - math.exp(-x + k * math.log(x) - math.lgamma(k)) * total
top = cols[-1]
metrics = {"chi2": chi2, "df": df, "p_value": p, "n": n,
           **{f"rate_{a}": count[a, top] / sum(count[a, c] for c in cols) for a in rows}}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
