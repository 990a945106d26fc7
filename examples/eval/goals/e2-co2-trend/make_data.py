"""Write table.csv: the weekly Mauna Loa CO2 record as statsmodels' wheel ships it.

Run once in the science environment's interpreter; nothing is downloaded. One row a week
from March 1958 to December 2001: the week's ``date`` (ISO) and its mean ``co2`` (ppm), empty
for the 59 weeks with no measurement.
"""

from pathlib import Path

from statsmodels.datasets import co2

table = co2.load_pandas().data
table.index.name = "date"
out = table.reset_index()
out["date"] = out["date"].dt.strftime("%Y-%m-%d")
out.to_csv(Path(__file__).with_name("table.csv"), index=False)
print(len(out), "rows,", int(out["co2"].isna().sum()), "missing")
