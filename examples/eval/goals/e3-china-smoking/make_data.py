"""Write table.csv: smoking and lung cancer in eight Chinese cities, as statsmodels' wheel
ships them (``china_smoking``).

Run once in the science environment's interpreter; nothing is downloaded. One row a city,
with the counts of its 2x2 table: ``smoking_yes_cancer_yes``, ``smoking_yes_cancer_no``,
``smoking_no_cancer_yes`` and ``smoking_no_cancer_no`` (the city names as shipped).
"""

from pathlib import Path

from statsmodels.datasets import china_smoking

table = china_smoking.load_pandas().data.reset_index().rename(columns={"Location": "city"})
table.to_csv(Path(__file__).with_name("table.csv"), index=False, lineterminator="\n")
print(len(table), "cities")
