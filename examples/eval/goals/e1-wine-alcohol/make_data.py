"""Write ``wine.csv`` from the wine recognition data scikit-learn's wheel ships
(``sklearn/datasets/data/wine_data.csv``); nothing is downloaded.

Run once, in the science environment's interpreter: ``<science env>/bin/python
examples/eval/goals/e1-wine-alcohol/make_data.py``. The CSV is committed. Each row is one wine
(178): its ``cultivar`` (``class_0``, ``class_1``, ``class_2``, scikit-learn's ``target_names``)
and its 13 chemical measurements under scikit-learn's feature names.
"""

from __future__ import annotations

from pathlib import Path

import sklearn
from sklearn.datasets import load_wine

OUT = Path(__file__).resolve().parent / "wine.csv"


def main() -> None:
    """The table, written with the cultivar first."""
    bunch = load_wine(as_frame=True)
    table = bunch.data.copy()
    table.insert(0, "cultivar", [str(bunch.target_names[t]) for t in bunch.target])
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(f"{OUT.name}: {len(table)} rows (scikit-learn {sklearn.__version__})")


if __name__ == "__main__":
    main()
