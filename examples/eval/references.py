"""The goal suite's reference answers, computed from tables/ with numpy, scipy, statsmodels.

Independent of Assay: nothing here runs a plan or a model. Run in the science environment
(``activities/environments/data/science.txt``): ``python examples/eval/references.py``
prints ``{task id: {field: value}}``, each value rounded as the task's answer format says;
``suite.json``'s labels are these, and ``tests/examples/test_eval_references.py`` recomputes
them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats

TABLES = Path(__file__).resolve().parent / "tables"
Labels = dict[str, str]


def table(name: str) -> pd.DataFrame:
    """One table of the suite."""
    return pd.read_csv(TABLES / name)


def r(value: float, places: int) -> str:
    """``value`` rounded to ``places`` decimals, as text."""
    return f"{value:.{places}f}"


def easy() -> dict[str, Callable[[], Labels]]:
    """Level 1: a mean, a median, a count."""
    wine, dia, fair = table("wine.csv"), table("diabetes.csv"), table("affairs.csv")
    macro, grun, clinic = table("macro.csv"), table("grunfeld.csv"), table("clinic.csv")
    cancer = table("cancer.csv")
    counts = wine["cultivar"].value_counts()
    return {
        "e-wine-alcohol": lambda: {"mean_alcohol": r(wine.loc[wine.cultivar == "barolo",
                                                              "alcohol"].mean(), 2)},
        "e-wine-counts": lambda: {k: str(int(counts[k])) for k in
                                  ("barolo", "grignolino", "barbera")},
        "e-diabetes-bmi": lambda: {"median_bmi": r(dia["bmi"].median(), 2)},
        "e-diabetes-high": lambda: {"n_high": str(int((dia["progression"] > 200).sum()))},
        "e-affairs-share": lambda: {"share": r((fair["affairs"] > 0).mean(), 3)},
        "e-macro-unemp": lambda: {"mean_unemp": r(macro["unemp"].mean(), 2)},
        "e-grunfeld-shape": lambda: {"firms": str(grun["firm"].nunique()),
                                     "years": str(grun["year"].nunique())},
        "e-clinic-smokers": lambda: {"smokers": str(int(clinic["smoker"].sum()))},
        "e-cancer-malignant": lambda: {"malignant": str(int(
            (cancer["diagnosis"] == "malignant").sum()))},
        "e-macro-peak": lambda: {"year": str(int(macro.loc[macro["realgdp"].idxmax(),
                                                           "year"]))},
    }


def medium() -> dict[str, Callable[[], Labels]]:
    """Level 2: a test or a regression with a stated adjustment."""
    wine, dia, fair = table("wine.csv"), table("diabetes.csv"), table("affairs.csv")
    macro, grun, cancer = table("macro.csv"), table("grunfeld.csv"), table("cancer.csv")
    trial, stack = table("trial.csv"), table("stackloss.csv")
    fair = fair.assign(any_affair=(fair["affairs"] > 0).astype(int))

    def welch() -> Labels:
        a = wine.loc[wine.cultivar == "barolo", "alcohol"]
        b = wine.loc[wine.cultivar == "grignolino", "alcohol"]
        return {"t": r(float(stats.ttest_ind(a, b, equal_var=False).statistic), 2)}

    def anova() -> Labels:
        groups = [g["color_intensity"] for _, g in wine.groupby("cultivar")]
        return {"F": r(float(stats.f_oneway(*groups).statistic), 2)}

    def chisq() -> Labels:
        crossed = pd.crosstab(trial["arm"], trial["outcome"])
        return {"chi2": r(float(stats.chi2_contingency(crossed, correction=False)[0]), 3)}

    def logit() -> Labels:
        fit = smf.logit("any_affair ~ rate_marriage + age + yrs_married", fair).fit(disp=0)
        return {"odds_ratio": r(float(np.exp(fit.params["rate_marriage"])), 3)}

    def fixed() -> Labels:
        fit = smf.ols("invest ~ value + capital + C(firm)", grun).fit()
        return {"value_coef": r(float(fit.params["value"]), 4)}

    return {
        "m-wine-welch": welch,
        "m-wine-anova": anova,
        "m-trial-chisquare": chisq,
        "m-affairs-logit": logit,
        "m-grunfeld-fixed": fixed,
        "m-diabetes-bmi": lambda: {"bmi_coef": r(float(smf.ols(
            "progression ~ bmi + age + C(sex)", dia).fit().params["bmi"]), 3)},
        "m-macro-phillips": lambda: {"slope": r(float(smf.ols(
            "infl ~ unemp", macro).fit().params["unemp"]), 3)},
        "m-cancer-corr": lambda: {"r": r(float(stats.pearsonr(
            cancer["mean radius"], cancer["mean texture"])[0]), 3)},
        "m-diabetes-spearman": lambda: {"rho": r(float(stats.spearmanr(
            dia["bp"], dia["progression"])[0]), 3)},
        "m-stackloss-r2": lambda: {"r2": r(float(smf.ols(
            "STACKLOSS ~ AIRFLOW + WATERTEMP + ACIDCONC", stack).fit().rsquared), 3)},
    }


def hard() -> dict[str, Callable[[], Labels]]:
    """Level 3: several steps, one of them a trap (codes, transforms, groups, duplicates)."""
    clinic, incomes, schools = table("clinic.csv"), table("incomes.csv"), table("schools.csv")
    pressure, shop, macro = table("pressure.csv"), table("shop.csv"), table("macro.csv")
    wine = table("wine.csv")
    measured = clinic[clinic["cholesterol"] != -999]

    def clustered() -> Labels:
        fit = smf.ols("score ~ tutoring", schools).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(schools["school"])[0]})
        return {"effect": r(float(fit.params["tutoring"]), 2),
                "se": r(float(fit.bse["tutoring"]), 2)}

    def paired() -> Labels:
        wide = pressure.pivot(index="patient", columns="visit", values="systolic")
        return {"t": r(float(stats.ttest_rel(wide["after"], wide["before"]).statistic), 2)}

    def complete_case() -> Labels:
        used = clinic.dropna(subset=["bmi"])
        fit = smf.logit("disease ~ age + smoker + bmi", used).fit(disp=0)
        return {"n": str(len(used)), "odds_ratio": r(float(np.exp(fit.params["smoker"])), 2)}

    def weights() -> Labels:
        unique = shop.drop_duplicates()
        kg = np.where(unique["unit"] == "g", unique["parcel_weight"] / 1000,
                      unique["parcel_weight"])
        return {"mean_kg": r(float(kg.mean()), 3)}

    def pca() -> Labels:
        x = wine.drop(columns="cultivar").to_numpy(dtype=float)
        z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
        eigen = np.linalg.eigvalsh(np.cov(z, rowvar=False))
        return {"share": r(float(eigen.max() / eigen.sum()), 3)}

    return {
        "h-clinic-cholesterol": lambda: {"mean": r(float(
            measured.loc[measured["age"] >= 50, "cholesterol"].mean()), 2)},
        "h-clinic-missing": lambda: {"not_measured": str(int(
            (clinic["cholesterol"] == -999).sum()))},
        "h-clinic-logit": complete_case,
        "h-incomes-log": lambda: {"factor": r(float(np.exp(smf.ols(
            "np.log(income) ~ education_years", incomes).fit().params["education_years"])), 3)},
        "h-schools-cluster": clustered,
        "h-schools-means": lambda: {"mean_of_means": r(float(
            schools.groupby("school")["score"].mean().mean()), 2)},
        "h-pressure-paired": paired,
        "h-shop-sales": lambda: {"mean_sales": r(float(shop.drop_duplicates()["sales"].mean()),
                                                 2)},
        "h-shop-weight": weights,
        "h-macro-growth": lambda: {"growth": r(float(
            (macro["realgdp"].pct_change() * 100).mean()), 3)},
        "h-wine-pca": pca,
    }


def references() -> dict[str, Labels]:
    """Every task's labels."""
    return {k: make() for part in (easy, medium, hard) for k, make in part().items()}


if __name__ == "__main__":
    print(json.dumps(references(), indent=1, sort_keys=True))
