"""Write table.csv: the Stanford heart transplant patients as statsmodels' wheel ships them.

Run once in the science environment's interpreter; nothing is downloaded. One row a patient
(69): ``survival`` (days of follow-up), ``censors`` (1 when the patient died at that time,
0 when still alive at the end of follow-up) and ``age`` (years).
"""

from pathlib import Path

from statsmodels.datasets import heart

table = heart.load_pandas().data
for column in ("survival", "censors"):
    table[column] = table[column].astype(int)
table.to_csv(Path(__file__).with_name("table.csv"), index=False, lineterminator="\n")
print(len(table), "rows,", int((table["censors"] == 0).sum()), "censored")
