"""Plot the fitted trend's measurements with matplotlib, as a PNG."""

import json
import os

import matplotlib

matplotlib.use("Agg")  # no display in the sandbox
import matplotlib.pyplot as plt
import pandas as pd
from scipy import stats

table = pd.read_csv("deps/fit/measurements.csv")
fit = stats.linregress(table["x"], table["y"])

figure, axes = plt.subplots(figsize=(6, 4))
axes.scatter(table["x"], table["y"], s=8, label="measurements")
axes.plot(table["x"], fit.intercept + fit.slope * table["x"], color="red",
          label=f"y = {fit.slope:.2f} x + {fit.intercept:.2f}")
axes.set_xlabel("x")
axes.set_ylabel("y")
axes.legend()
figure.tight_layout()
figure.savefig("scatter.png", dpi=100)

metrics = {"points": len(table), "png_bytes": os.path.getsize("scatter.png")}
with open("metrics.json", "w") as out:
    json.dump(metrics, out)
print(json.dumps(metrics))
