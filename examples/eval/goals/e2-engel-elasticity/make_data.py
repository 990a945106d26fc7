"""Write table.csv: Engel's Belgian household budgets (1857) as statsmodels' wheel ships them.

Run once in the science environment's interpreter; nothing is downloaded. 235 households,
their annual ``income`` and ``foodexp`` (food expenditure), both in Belgian francs.
"""

from pathlib import Path

from statsmodels.datasets import engel

table = engel.load_pandas().data
table.to_csv(Path(__file__).with_name("table.csv"), index=False, float_format="%.6f")
print(len(table), "rows")
