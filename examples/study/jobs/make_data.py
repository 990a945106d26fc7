"""Make a small synthetic dataset on a curve: ``y = a x² + b x + c`` plus Gaussian noise.

Standard library only and seeded, so every cycle of the study sees the same rows. Writes
``data.csv`` (columns ``x`` and ``y``), ``truth.json`` (the curve) and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--a", type=float, default=1.5)
    parser.add_argument("--b", type=float, default=-0.5)
    parser.add_argument("--c", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    if not 5 <= args.rows <= 100_000:
        sys.exit(f"--rows={args.rows}: give between 5 and 100000 rows")
    rng = random.Random(args.seed)
    xs = [rng.uniform(-2.0, 2.0) for _ in range(args.rows)]
    ys = [args.a * x * x + args.b * x + args.c + rng.gauss(0.0, args.noise) for x in xs]
    with Path("data.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x", "y"])
        writer.writerows((f"{x:.6f}", f"{y:.6f}") for x, y in zip(xs, ys, strict=True))
    truth = {"a": args.a, "b": args.b, "c": args.c, "noise": args.noise, "rows": args.rows}
    Path("truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    Path("metrics.json").write_text(json.dumps({"rows": args.rows}) + "\n", encoding="utf-8")
    print(f"{args.rows} rows around y = {args.a} x² + {args.b} x + {args.c}")


if __name__ == "__main__":
    main()
