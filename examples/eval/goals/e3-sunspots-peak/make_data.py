"""Write table.csv: the yearly sunspot numbers as statsmodels' wheel ships them.

Run once in the science environment's interpreter; nothing is downloaded. One row a year
from 1700 to 2008: the ``year`` and its ``activity`` (Wolf's yearly sunspot number).
"""

from pathlib import Path

from statsmodels.datasets import sunspots

table = sunspots.load_pandas().data.rename(columns={"YEAR": "year", "SUNACTIVITY": "activity"})
table["year"] = table["year"].astype(int)
table.to_csv(Path(__file__).with_name("table.csv"), index=False, lineterminator="\n")
print(len(table), "rows")
