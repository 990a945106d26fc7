"""Write ``breast_cancer.csv`` from the copy of the Wisconsin diagnostic breast cancer data that
scikit-learn's wheel ships (``sklearn/datasets/data/breast_cancer.csv``); nothing is downloaded.

Run once, in the science environment's interpreter (it needs scikit-learn and pandas):
``<science env>/bin/python examples/hand-debug/make_data.py``. The CSV is committed, so the
example needs no generation at run time. Each row is one tumour (569): its ``diagnosis``
(``malignant`` or ``benign``, scikit-learn's ``target_names`` for its 0/1 target) and the 30
measurements of its cell nuclei under scikit-learn's feature names, values as shipped.
"""

from __future__ import annotations

from pathlib import Path

import sklearn
from sklearn.datasets import load_breast_cancer

OUT = Path(__file__).resolve().parent / "breast_cancer.csv"


def main() -> None:
    """The table, written with the diagnosis first."""
    bunch = load_breast_cancer(as_frame=True)
    table = bunch.data.copy()
    table.insert(0, "diagnosis", [str(bunch.target_names[t]) for t in bunch.target])
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(f"{OUT.name}: {len(table)} rows, {table.shape[1]} columns "
          f"(scikit-learn {sklearn.__version__})")


if __name__ == "__main__":
    main()
