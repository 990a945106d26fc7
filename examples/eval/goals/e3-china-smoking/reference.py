"""The labels of e3-china-smoking, computed with numpy and scipy (never by running Assay).

The Mantel-Haenszel odds ratio over the eight cities' 2x2 tables (smokers against
non-smokers, cancer against none), and the p-value of the Breslow-Day test that every city
shares it: each city's expected count of smoking cases under the common odds ratio solves a
quadratic, and the sum of (observed - expected)^2 / variance is chi-square with 7 degrees.
"""

import csv
import json
from pathlib import Path

import numpy as np
from scipy import stats

with Path(__file__).with_name("table.csv").open(encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
a, b, c, d = (np.array([float(r[k]) for r in rows]) for k in (
    "smoking_yes_cancer_yes", "smoking_yes_cancer_no", "smoking_no_cancer_yes",
    "smoking_no_cancer_no"))
n = a + b + c + d
odds = np.sum(a * d / n) / np.sum(b * c / n)
smokers, cases = a + b, a + c
statistic = 0.0
for k in range(len(n)):
    low, high = max(0.0, cases[k] - (n[k] - smokers[k])), min(smokers[k], cases[k])
    # (e (n - m - c + e)) / ((m - e)(c - e)) = odds, as a quadratic in e
    q2 = 1 - odds
    q1 = (n[k] - smokers[k] - cases[k]) + odds * (smokers[k] + cases[k])
    q0 = -odds * smokers[k] * cases[k]
    e = next(r.real for r in np.roots([q2, q1, q0]) if low <= r.real <= high)
    variance = 1 / (1 / e + 1 / (smokers[k] - e) + 1 / (cases[k] - e)
                    + 1 / (n[k] - smokers[k] - cases[k] + e))
    statistic += (a[k] - e) ** 2 / variance
p_value = stats.chi2.sf(statistic, len(n) - 1)
print(json.dumps({"odds_ratio": f"{odds:.2f}", "p_homogeneity": f"{p_value:.3f}"}))
