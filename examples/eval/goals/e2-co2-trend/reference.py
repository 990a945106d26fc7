"""The labels of e2-co2-trend, computed with numpy alone (never by running Assay).

Weeks with no measurement are left out; each calendar year's mean is taken over its measured
weeks; the trend is the least-squares slope of the annual means of 1960-1999 on the year.
"""

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

weeks: dict[int, list[float]] = defaultdict(list)
with Path(__file__).with_name("table.csv").open(encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        if row["co2"]:
            weeks[int(row["date"][:4])].append(float(row["co2"]))
years = np.arange(1960, 2000)
means = np.array([np.mean(weeks[int(y)]) for y in years])
slope = np.polyfit(years, means, 1)[0]
print(json.dumps({"trend": f"{slope:.3f}", "mean_1999": f"{means[-1]:.2f}"}))
