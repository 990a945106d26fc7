"""The labels of ``e1-stackloss-fit``, computed from ``stackloss.csv`` with numpy, never by
Assay: ordinary least squares by ``numpy.linalg.lstsq`` on a design with an intercept.

Prints the labels as JSON: ``<science env>/bin/python reference.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def labels() -> dict[str, str]:
    """Water temperature's coefficient and the fit's R², each to three decimals."""
    table = np.genfromtxt(HERE / "stackloss.csv", delimiter=",", names=True)
    y = table["stack_loss"]
    design = np.column_stack([np.ones_like(y), table["air_flow"], table["water_temp"],
                              table["acid_conc"]])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    r2 = 1 - residual @ residual / np.sum((y - y.mean()) ** 2)
    return {"water_temp_coef": f"{coef[2]:.3f}", "r_squared": f"{r2:.3f}"}


if __name__ == "__main__":
    print(json.dumps(labels(), sort_keys=True))
