"""The labels of e2-wine-anova, computed with numpy and scipy (never by running Assay).

Welch's one-way ANOVA (unequal variances) of ``flavanoids`` across the three cultivars,
computed from its formula, and the cultivar with the highest mean flavanoids.
"""

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

groups: dict[str, list[float]] = defaultdict(list)
with Path(__file__).with_name("table.csv").open(encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        groups[row["cultivar"]].append(float(row["flavanoids"]))
samples = [np.array(v) for v in groups.values()]
k = len(samples)
n = np.array([len(s) for s in samples])
means = np.array([s.mean() for s in samples])
weights = n / np.array([s.var(ddof=1) for s in samples])
grand = (weights * means).sum() / weights.sum()
tail = ((1 - weights / weights.sum()) ** 2 / (n - 1)).sum()
f_welch = ((weights * (means - grand) ** 2).sum() / (k - 1)) / (1 + 2 * (k - 2) / (k**2 - 1) * tail)
df2 = (k**2 - 1) / (3 * tail)
p_value = stats.f.sf(f_welch, k - 1, df2)
top = max(groups, key=lambda g: np.mean(groups[g]))
print(json.dumps({"f_statistic": f"{f_welch:.2f}", "top_cultivar": top}))
assert p_value < 1e-10
