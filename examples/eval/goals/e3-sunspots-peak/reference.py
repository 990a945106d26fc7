"""The labels of e3-sunspots-peak, computed with numpy alone (never by running Assay).

The peak is the year of the largest yearly sunspot number; the mean is over the years 1900 to
1999, both included.
"""

import json
from pathlib import Path

import numpy as np

table = np.genfromtxt(Path(__file__).with_name("table.csv"), delimiter=",", names=True)
peak = int(table["year"][np.argmax(table["activity"])])
century = table["activity"][(table["year"] >= 1900) & (table["year"] <= 1999)]
print(json.dumps({"peak_year": str(peak), "mean_activity": f"{century.mean():.1f}"}))
