"""Compare a numeric column across groups: Welch's t-test of two, or one-way ANOVA of all.

Standard library only: p-values come from the regularised incomplete beta function (Student's
t and Fisher's F are both beta tails). Writes ``metrics.json`` and ``result.json``.
"""

import argparse
import csv
import json
import math
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--column", required=True)
parser.add_argument("--group", required=True)
parser.add_argument("--test", choices=["welch", "anova"], required=True)
parser.add_argument("--a", default="")
parser.add_argument("--b", default="")
args = parser.parse_args()


def betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * betacf(a, b, x) / a
    return 1.0 - front * betacf(b, a, 1.0 - x) / b


with open(args.data, newline="", encoding="utf-8") as handle:
    groups = {}
    for row in csv.DictReader(handle):
        groups.setdefault(row[args.group], []).append(float(row[args.column]))

if args.test == "welch":
    a, b = groups[args.a], groups[args.b]
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    p = betainc(df / 2, 0.5, df / (df + t * t))
    metrics = {"difference": statistics.fmean(a) - statistics.fmean(b), "t_statistic": t,
               "df": df, "p_value": p, "n_a": len(a), "n_b": len(b)}
else:
    everything = [x for xs in groups.values() for x in xs]
    grand = statistics.fmean(everything)
    between = sum(len(xs) * (statistics.fmean(xs) - grand) ** 2 for xs in groups.values())
    within = sum((x - statistics.fmean(xs)) ** 2 for xs in groups.values() for x in xs)
    d1, d2 = len(groups) - 1, len(everything) - len(groups)
    f = (between / d1) / (within / d2)
    metrics = {"f_statistic": f, "df_between": d1, "df_within": d2,
               "p_value": betainc(d2 / 2, d1 / 2, d2 / (d2 + d1 * f)),
               "eta_squared": between / (between + within), "groups": len(groups)}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
