"""Seeded Monte Carlo estimates whose exact answers are known (standard library).

``pi``: points in the unit square inside the quarter circle, times 4. ``birthday``: the
chance that 23 people share a birthday (365 equally likely days). ``walk``: the mean squared
distance of a simple ±1 random walk after ``steps`` steps (exactly ``steps``). Writes
``metrics.json`` and ``result.json`` with the estimate and its standard error.
"""

import argparse
import json
import random
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("--kind", choices=["pi", "birthday", "walk"], required=True)
parser.add_argument("--trials", type=int, required=True)
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--steps", type=int, default=100)
args = parser.parse_args()
rng = random.Random(args.seed)


def one():
    """One trial's value."""
    if args.kind == "pi":
        x, y = rng.random(), rng.random()
        return 4.0 * (x * x + y * y <= 1.0)
    if args.kind == "birthday":
        days = [rng.randrange(365) for _ in range(23)]
        return float(len(set(days)) < 23)
    return float(sum(rng.choice((-1, 1)) for _ in range(args.steps)) ** 2)


values = [one() for _ in range(args.trials)]
metrics = {"estimate": statistics.fmean(values),
           "std_error": statistics.stdev(values) / len(values) ** 0.5, "trials": args.trials}
for name in ("metrics.json", "result.json"):
    with open(name, "w", encoding="utf-8") as out:
        json.dump(metrics, out, indent=2)
