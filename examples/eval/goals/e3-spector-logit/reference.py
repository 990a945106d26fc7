"""The labels of e3-spector-logit, computed with numpy and scipy (never by running Assay).

A logistic regression of ``grade`` on an intercept, ``gpa``, ``tuce`` and ``psi``, fitted by
Newton-Raphson on the log-likelihood; the odds ratio of ``psi`` is the exponential of its
coefficient and its p-value the two-sided Wald test's.
"""

import json
from pathlib import Path

import numpy as np
from scipy import stats

table = np.genfromtxt(Path(__file__).with_name("table.csv"), delimiter=",", names=True)
y = table["grade"]
x = np.column_stack([np.ones_like(y), table["gpa"], table["tuce"], table["psi"]])
beta = np.zeros(x.shape[1])
for _ in range(50):
    p = 1 / (1 + np.exp(-x @ beta))
    information = x.T @ (x * (p * (1 - p))[:, None])
    step = np.linalg.solve(information, x.T @ (y - p))
    beta += step
    if np.max(np.abs(step)) < 1e-12:
        break
p = 1 / (1 + np.exp(-x @ beta))
se = np.sqrt(np.diag(np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))))
wald_p = 2 * stats.norm.sf(abs(beta[3] / se[3]))
print(json.dumps({"odds_ratio_psi": f"{np.exp(beta[3]):.3f}", "p_value_psi": f"{wald_p:.3f}"}))
