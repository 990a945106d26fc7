"""The labels of e2-grunfeld-within, computed with numpy alone (never by running Assay).

Within firms: invest, value and capital are each demeaned by firm (the fixed-effects, or
within, estimator), and invest is regressed on the other two without an intercept.
"""

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

with Path(__file__).with_name("table.csv").open(encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
by_firm: dict[str, list[int]] = defaultdict(list)
for i, row in enumerate(rows):
    by_firm[row["firm"]].append(i)
data = np.array([[float(r["invest"]), float(r["value"]), float(r["capital"])] for r in rows])
for members in by_firm.values():
    data[members] -= data[members].mean(axis=0)
coef, *_ = np.linalg.lstsq(data[:, 1:], data[:, 0], rcond=None)
print(json.dumps({"value": f"{coef[0]:.3f}", "capital": f"{coef[1]:.3f}"}))
