"""The labels of ``e1-longley-trend``, computed from ``longley.csv`` with numpy and scipy,
never by Assay: the least-squares slope of TOTEMP on YEAR (``scipy.stats.linregress``) and
Pearson's correlation of GNP with TOTEMP (``numpy.corrcoef``).

Prints the labels as JSON: ``<science env>/bin/python reference.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import stats

HERE = Path(__file__).resolve().parent


def labels() -> dict[str, str]:
    """The trend's slope to two decimals, the correlation to three."""
    table = np.genfromtxt(HERE / "longley.csv", delimiter=",", names=True)
    slope = stats.linregress(table["YEAR"], table["TOTEMP"]).slope
    correlation = np.corrcoef(table["GNP"], table["TOTEMP"])[0, 1]
    return {"slope_per_year": f"{slope:.2f}", "gnp_correlation": f"{correlation:.3f}"}


if __name__ == "__main__":
    print(json.dumps(labels(), sort_keys=True))
