"""Write fair.csv from the Fair (1978) affairs data that ships inside the statsmodels wheel.

Run in the science environment's interpreter (no download: the table is read from the
installed package):

    <science environment>/bin/python export.py   # `assay envs list` shows where it is
"""

from pathlib import Path

import statsmodels
import statsmodels.datasets.fair as fair

table = fair.load_pandas().data
out = Path(__file__).with_name("fair.csv")
table.to_csv(out, index=False, float_format="%.7g")
print(f"{out.name}: {len(table)} rows, {table.shape[1]} columns, from statsmodels "
      f"{statsmodels.__version__}")
