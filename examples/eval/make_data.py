"""Write the suite's data sets into plans/data/ (deterministic: fixed seeds, standard library).

Run once when the suite changes: ``python examples/eval/make_data.py``. The CSV files are
committed, so the suite needs no generation at run time; the reference answers in
``suite.json`` were computed from these files with numpy/scipy, independently of the jobs.
"""

from __future__ import annotations

import csv
import math
import random
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "plans" / "data"


def write(name: str, header: list[str], rows: list[list[object]]) -> None:
    """One CSV file."""
    with (DATA / name).open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)


def main() -> None:
    """Every data set of the suite."""
    DATA.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE.parent / "iris" / "iris.csv", DATA / "iris.csv")
    rng = random.Random(19)
    write("heights.csv", ["site", "height"],
          [[site, round(rng.gauss(mu, 6.0), 1)] for site, mu in
           (("north", 172.0), ("south", 168.0), ("east", 175.0)) for _ in range(40)])
    rng = random.Random(7)
    write("dose.csv", ["dose", "response"],
          [[d, round(3.0 + 1.5 * d + rng.gauss(0, 2.0), 3)] for d in range(1, 31)])
    rng = random.Random(11)
    values = [round(rng.gauss(50.0, 2.0), 2) for _ in range(96)]
    for at, spike in ((9, 71.5), (33, 24.0), (58, 80.2), (87, 19.7)):
        values[at] = spike
    write("sensor.csv", ["reading"], [[v] for v in values])
    rng = random.Random(3)
    write("sales.csv", ["month", "sales"],
          [[m, round(200 + 2.5 * m + 30 * math.sin(2 * math.pi * m / 12) + rng.gauss(0, 5), 1)]
           for m in range(72)])
    rng = random.Random(5)
    level, series = 0.0, []
    for _ in range(300):
        level = 0.7 * level + rng.gauss(0, 1)
        series.append([round(level, 4)])
    write("ar1.csv", ["value"], series)
    rng = random.Random(23)
    write("trial.csv", ["arm", "recovered"],
          [[arm, int(rng.random() < p)] for arm, p in (("drug", 0.62), ("placebo", 0.41))
           for _ in range(120)])


if __name__ == "__main__":
    main()
