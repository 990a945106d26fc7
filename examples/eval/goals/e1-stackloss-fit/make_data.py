"""Write ``stackloss.csv`` from Brownlee's stack loss data statsmodels' wheel ships
(``statsmodels/datasets/stackloss``); nothing is downloaded.

Run once, in the science environment's interpreter: ``<science env>/bin/python
examples/eval/goals/e1-stackloss-fit/make_data.py``. The CSV is committed. Each row is one
day of a plant oxidising ammonia (21): ``stack_loss`` (ammonia lost, tenths of a percent),
``air_flow``, ``water_temp`` (degrees C) and ``acid_conc`` (acid concentration, coded).
"""

from __future__ import annotations

from pathlib import Path

import statsmodels
from statsmodels.datasets import stackloss

OUT = Path(__file__).resolve().parent / "stackloss.csv"
NAMES = {"STACKLOSS": "stack_loss", "AIRFLOW": "air_flow", "WATERTEMP": "water_temp",
         "ACIDCONC": "acid_conc"}


def main() -> None:
    """The table with readable column names, measurements as integers."""
    table = stackloss.load_pandas().data.rename(columns=NAMES).astype(int)
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(f"{OUT.name}: {len(table)} rows (statsmodels {statsmodels.__version__})")


if __name__ == "__main__":
    main()
