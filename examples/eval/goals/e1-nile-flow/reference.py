"""The labels of ``e1-nile-flow``, computed from ``nile.csv`` with numpy, never by Assay.

The standard deviation is the sample one (``ddof=1``), as "the standard deviation of the flow
over the years" means for a sample of years. Prints the labels as JSON:
``<science env>/bin/python reference.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def labels() -> dict[str, str]:
    """Each field of the answer format, rounded as the format says."""
    volume = np.genfromtxt(HERE / "nile.csv", delimiter=",", names=True)["volume"]
    return {"mean_flow": f"{volume.mean():.2f}", "sd_flow": f"{volume.std(ddof=1):.2f}"}


if __name__ == "__main__":
    print(json.dumps(labels(), sort_keys=True))
