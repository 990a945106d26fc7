"""Write the goal suite's tables into tables/: bundled data sets exported, others generated.

Run once, in the science environment (``activities/environments/data/science.txt``), when the
suite changes: ``python examples/eval/make_tables.py``. Nothing is downloaded: the exported
tables ship inside the scikit-learn and statsmodels wheels; the generated ones use fixed
seeds. The CSV files are committed, so the suite needs nothing at run time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from sklearn import datasets

HERE = Path(__file__).resolve().parent
TABLES = HERE / "tables"


def exported() -> dict[str, pd.DataFrame]:
    """The bundled data sets, as their packages ship them."""
    wine = datasets.load_wine(as_frame=True).frame
    wine["cultivar"] = wine.pop("target").map({0: "barolo", 1: "grignolino", 2: "barbera"})
    diabetes = datasets.load_diabetes(as_frame=True, scaled=False).frame
    diabetes = diabetes.rename(columns={"target": "progression"})
    cancer = datasets.load_breast_cancer(as_frame=True).frame
    cancer["diagnosis"] = cancer.pop("target").map({0: "malignant", 1: "benign"})
    cancer = cancer[["mean radius", "mean texture", "mean area", "mean smoothness",
                     "diagnosis"]]
    return {"wine.csv": wine, "diabetes.csv": diabetes, "cancer.csv": cancer,
            "affairs.csv": sm.datasets.fair.load_pandas().data,
            "macro.csv": sm.datasets.macrodata.load_pandas().data,
            "grunfeld.csv": sm.datasets.grunfeld.load_pandas().data,
            "stackloss.csv": sm.datasets.stackloss.load_pandas().data}


def clinic(rng: np.random.Generator) -> pd.DataFrame:
    """Patients: cholesterol coded -999 when not measured, BMI left empty when not taken."""
    n = 400
    age = rng.integers(25, 80, n)
    smoker = rng.integers(0, 2, n)
    cholesterol = np.round(170 + 0.8 * age + 12 * smoker + rng.normal(0, 25, n), 1)
    cholesterol[rng.random(n) < 0.12] = -999
    bmi = np.round(rng.normal(27, 4, n), 1)
    bmi_missing = rng.random(n) < 0.15
    logit = -6 + 0.07 * age + 0.9 * smoker + 0.05 * bmi
    disease = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    frame = pd.DataFrame({"patient": np.arange(1, n + 1), "age": age, "smoker": smoker,
                          "cholesterol": cholesterol, "bmi": bmi, "disease": disease})
    frame.loc[bmi_missing, "bmi"] = np.nan
    return frame


def incomes(rng: np.random.Generator) -> pd.DataFrame:
    """Income is log-normal in years of education: its logarithm is linear."""
    n = 500
    education = rng.integers(8, 21, n)
    income = np.round(np.exp(9.2 + 0.085 * education + rng.normal(0, 0.45, n)), 0)
    return pd.DataFrame({"person": np.arange(1, n + 1), "education_years": education,
                         "income": income})


def schools(rng: np.random.Generator) -> pd.DataFrame:
    """Pupils in 30 schools of unequal size; tutoring is decided per school."""
    rows: list[dict[str, object]] = []
    for school in range(1, 31):
        size = int(rng.integers(8, 60))
        tutored = int(rng.random() < 0.5)
        effect = rng.normal(0, 6)
        for _ in range(size):
            rows.append({"school": f"S{school:02d}", "tutoring": tutored,
                         "score": round(60 + 4 * tutored + effect + rng.normal(0, 10), 1)})
    return pd.DataFrame(rows)


def trial(rng: np.random.Generator) -> pd.DataFrame:
    """A two-arm trial with a binary outcome."""
    arm = rng.choice(["placebo", "drug"], 300)
    recovered = rng.random(300) < np.where(arm == "drug", 0.62, 0.45)
    return pd.DataFrame({"participant": np.arange(1, 301), "arm": arm,
                         "outcome": np.where(recovered, "recovered", "not recovered")})


def pressure(rng: np.random.Generator) -> pd.DataFrame:
    """Blood pressure before and after a treatment, one row per patient and visit."""
    n = 40
    before = rng.normal(150, 15, n)
    after = before - 4 + rng.normal(0, 6, n)
    frame = pd.DataFrame({"patient": np.tile(np.arange(1, n + 1), 2),
                          "visit": np.repeat(["before", "after"], n),
                          "systolic": np.round(np.concatenate([before, after]), 1)})
    return frame.sample(frac=1, random_state=7).reset_index(drop=True)


def shop(rng: np.random.Generator) -> pd.DataFrame:
    """Daily sales with some days exported twice, and weights in grams or kilograms."""
    days = pd.date_range("2024-01-01", periods=120, freq="D")
    frame = pd.DataFrame({"date": days.strftime("%Y-%m-%d"),
                          "sales": np.round(rng.gamma(5, 40, 120), 2),
                          "parcel_weight": np.round(rng.uniform(0.5, 4, 120), 3),
                          "unit": "kg"})
    grams = rng.random(120) < 0.3
    frame.loc[grams, "parcel_weight"] = np.round(frame.loc[grams, "parcel_weight"] * 1000, 0)
    frame.loc[grams, "unit"] = "g"
    twice = frame.sample(15, random_state=3)
    return pd.concat([frame, twice]).sort_values("date", kind="stable").reset_index(drop=True)


def main() -> None:
    """Every table of the suite."""
    TABLES.mkdir(parents=True, exist_ok=True)
    tables = exported()
    makers = {"clinic.csv": clinic, "incomes.csv": incomes, "schools.csv": schools,
              "trial.csv": trial, "pressure.csv": pressure, "shop.csv": shop}
    for seed, (name, make) in enumerate(makers.items(), start=20261128):
        tables[name] = make(np.random.default_rng(seed))
    for name, frame in tables.items():
        frame.to_csv(TABLES / name, index=False, lineterminator="\n")


if __name__ == "__main__":
    main()
