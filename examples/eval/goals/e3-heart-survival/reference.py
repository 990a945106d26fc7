"""The labels of e3-heart-survival, computed with numpy alone (never by running Assay).

The Kaplan-Meier estimate over the observed deaths (``censors`` 1), patients still alive at
the end of follow-up (``censors`` 0) leaving the risk set after their time: the median
survival is the first time at which the estimate falls to one half or below, the one-year
survival the estimate at 365 days.
"""

import json
from pathlib import Path

import numpy as np

table = np.genfromtxt(Path(__file__).with_name("table.csv"), delimiter=",", names=True)
times, died = table["survival"], table["censors"] == 1
survival, curve = 1.0, []
for t in np.unique(times[died]):
    at_risk = np.sum(times >= t)
    survival *= 1 - np.sum(died & (times == t)) / at_risk
    curve.append((t, survival))
median = next(t for t, s in curve if s <= 0.5)
one_year = [s for t, s in curve if t <= 365][-1]
print(json.dumps({"median_days": str(int(median)), "survival_1y": f"{one_year:.3f}"}))
