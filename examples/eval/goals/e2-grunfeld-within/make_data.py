"""Write table.csv: Grunfeld's investment panel as statsmodels' wheel ships it.

Run once in the science environment's interpreter; nothing is downloaded. 11 US firms over
20 years (1935-1954): gross investment ``invest``, market ``value`` and capital stock
``capital`` (millions of 1947 dollars), with ``firm`` and ``year``.
"""

from pathlib import Path

from statsmodels.datasets import grunfeld

table = grunfeld.load_pandas().data
table["year"] = table["year"].astype(int)
table.to_csv(Path(__file__).with_name("table.csv"), index=False)
print(len(table), "rows,", table["firm"].nunique(), "firms")
