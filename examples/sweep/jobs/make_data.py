"""Make a small synthetic dataset: ``y = slope * x + intercept`` plus Gaussian noise.

Standard library only, seeded, so every run (and every branch reusing it) sees the same rows.
Writes ``data.csv`` (columns ``x`` and ``y``), ``truth.json`` (the line the rows were drawn
around) and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--slope", type=float, default=2.0)
    parser.add_argument("--intercept", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    if not 3 <= args.rows <= 100_000:
        sys.exit(f"--rows={args.rows}: give between 3 and 100000 rows")

    rng = random.Random(args.seed)
    xs = [rng.uniform(-1.0, 1.0) for _ in range(args.rows)]
    ys = [args.slope * x + args.intercept + rng.gauss(0.0, args.noise) for x in xs]
    with Path("data.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x", "y"])
        writer.writerows((f"{x:.6f}", f"{y:.6f}") for x, y in zip(xs, ys, strict=True))
    truth = {"slope": args.slope, "intercept": args.intercept, "noise": args.noise,
             "rows": args.rows, "seed": args.seed}
    Path("truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    metrics = {"rows": args.rows, "x_mean": round(statistics.fmean(xs), 6),
               "y_mean": round(statistics.fmean(ys), 6)}
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(f"{args.rows} rows around y = {args.slope} x + {args.intercept} (noise {args.noise})")


if __name__ == "__main__":
    main()
