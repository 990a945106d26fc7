"""Write ``nile.csv`` from the Nile flow data statsmodels' wheel ships
(``statsmodels/datasets/nile``); nothing is downloaded.

Run once, in the science environment's interpreter: ``<science env>/bin/python
examples/eval/goals/e1-nile-flow/make_data.py``. The CSV is committed. Each row is one year
(1871-1970): ``year`` and ``volume``, the annual flow of the Nile at Aswan (10^8 m^3).
"""

from __future__ import annotations

from pathlib import Path

import statsmodels
from statsmodels.datasets import nile

OUT = Path(__file__).resolve().parent / "nile.csv"


def main() -> None:
    """The table as shipped, years as integers."""
    table = nile.load_pandas().data.astype({"year": int})
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(f"{OUT.name}: {len(table)} rows (statsmodels {statsmodels.__version__})")


if __name__ == "__main__":
    main()
