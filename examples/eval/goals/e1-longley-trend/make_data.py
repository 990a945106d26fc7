"""Write ``longley.csv`` from Longley's macroeconomic data statsmodels' wheel ships
(``statsmodels/datasets/longley``); nothing is downloaded.

Run once, in the science environment's interpreter: ``<science env>/bin/python
examples/eval/goals/e1-longley-trend/make_data.py``. The CSV is committed. Each row is one
year (1947-1962, 16): ``TOTEMP`` (total employment), ``GNPDEFL`` (GNP deflator), ``GNP``,
``UNEMP`` (unemployed), ``ARMED`` (armed forces), ``POP`` (population over 14) and ``YEAR``,
under statsmodels' names, years as integers.
"""

from __future__ import annotations

from pathlib import Path

import statsmodels
from statsmodels.datasets import longley

OUT = Path(__file__).resolve().parent / "longley.csv"


def main() -> None:
    """The table as shipped, years as integers."""
    table = longley.load_pandas().data.astype({"YEAR": int})
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(f"{OUT.name}: {len(table)} rows (statsmodels {statsmodels.__version__})")


if __name__ == "__main__":
    main()
