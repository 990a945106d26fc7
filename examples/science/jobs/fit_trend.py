"""Generate a noisy linear trend, fit it with scipy and save the table with pandas."""

import argparse
import json

import numpy as np
import pandas as pd
from scipy import stats

parser = argparse.ArgumentParser()
parser.add_argument("--points", type=int, default=200)
parser.add_argument("--seed", type=int, default=7)
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
x = np.linspace(0, 10, args.points)
table = pd.DataFrame({"x": x, "y": 2.0 * x + 1.0 + rng.normal(0, 1.5, args.points)})
table.to_csv("measurements.csv", index=False)

fit = stats.linregress(table["x"], table["y"])
metrics = {"slope": float(fit.slope), "intercept": float(fit.intercept),
           "r_squared": float(fit.rvalue**2), "p_value": float(fit.pvalue)}
with open("metrics.json", "w") as out:
    json.dump(metrics, out)
print(json.dumps(metrics))
