"""The labels of e2-engel-elasticity, computed with numpy alone (never by running Assay).

The income elasticity of food expenditure is the slope of log(foodexp) on log(income) by
least squares; r_squared is that fit's coefficient of determination.
"""

import json
from pathlib import Path

import numpy as np

rows = np.genfromtxt(Path(__file__).with_name("table.csv"), delimiter=",", names=True)
x, y = np.log(rows["income"]), np.log(rows["foodexp"])
design = np.column_stack([np.ones_like(x), x])
coef, *_ = np.linalg.lstsq(design, y, rcond=None)
residual = y - design @ coef
r_squared = 1 - residual @ residual / ((y - y.mean()) @ (y - y.mean()))
print(json.dumps({"elasticity": f"{coef[1]:.3f}", "r_squared": f"{r_squared:.3f}"}))
