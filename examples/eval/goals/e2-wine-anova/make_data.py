"""Write table.csv: the wine recognition table as scikit-learn's wheel ships it.

Run once in the science environment's interpreter; nothing is downloaded. 178 wines from
three cultivars (``cultivar``: class_0, class_1, class_2, scikit-learn's target names) and
their 13 chemical measurements under scikit-learn's feature names.
"""

from pathlib import Path

from sklearn.datasets import load_wine

bunch = load_wine(as_frame=True)
table = bunch.frame.drop(columns="target")
table.insert(0, "cultivar", [str(bunch.target_names[i]) for i in bunch.target])
table.to_csv(Path(__file__).with_name("table.csv"), index=False)
print(len(table), "rows")
