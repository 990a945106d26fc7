"""Write table.csv: Spector and Mazzeo's 32 students as statsmodels' wheel ships them.

Run once in the science environment's interpreter; nothing is downloaded. One row a student:
``gpa`` (grade point average), ``tuce`` (score on a test of economics taken at the start),
``psi`` (1 if taught by the personalized system of instruction, else 0) and ``grade`` (1 if
the student's grade improved, else 0).
"""

from pathlib import Path

from statsmodels.datasets import spector

table = spector.load_pandas().data.rename(columns=str.lower)
for column in ("tuce", "psi", "grade"):
    table[column] = table[column].astype(int)
table.to_csv(Path(__file__).with_name("table.csv"), index=False, lineterminator="\n")
print(len(table), "rows")
