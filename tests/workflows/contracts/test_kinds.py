"""Task kinds come from what a job does, not from how its action opens."""

from __future__ import annotations

import pytest

from workflows.contracts.kinds import describe_kind, job_calls, kind_covers, kind_parts, task_kind
from workflows.contracts.plan import JobSpec

OPENING = ("Using the housing data in housing.csv, model median price from the other columns "
           "and report how well the model explains held-out prices")
"""The one sentence the five tasks of the study all began with."""

OLS = """
import json
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
df = pd.read_csv("housing.csv")
X, y = df.drop(columns="price"), df["price"]
a, b, c, d = train_test_split(X, y, random_state=0)
m = LinearRegression().fit(a, c)
json.dump({"r2": r2_score(d, m.predict(b))}, open("metrics.json", "w"))
"""
BOOSTING = """
import json
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import r2_score
df = pd.read_csv("housing.csv")
m = GradientBoostingRegressor(n_estimators=200).fit(df.drop(columns="price"), df["price"])
json.dump({"r2": r2_score(df["price"], m.predict(df.drop(columns="price")))}, open("m.json", "w"))
"""
LASSO = """
import pandas as pd
from sklearn.linear_model import LassoCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures
df = pd.read_csv("housing.csv")
m = make_pipeline(PolynomialFeatures(2, interaction_only=True), LassoCV()).fit(df, df.price)
"""
SPLINES = """
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer
df = pd.read_csv("housing.csv")
m = make_pipeline(SplineTransformer(n_knots=5), LinearRegression()).fit(df, df.price)
"""
CURVE = """
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import learning_curve
df = pd.read_csv("housing.csv")
sizes, train, test = learning_curve(LinearRegression(), df, df.price, cv=5)
"""


def job(source: str, *metrics: str, **args: str | int) -> JobSpec:
    return JobSpec(code=source, source=source, filename="job.py",
                   expected_metrics=list(metrics), args=dict(args))


def test_five_analyses_opening_with_one_sentence_get_five_kinds() -> None:
    kinds = {task_kind(f"{OPENING}: {how}", job(src, "r2"), ["housing.csv"])
             for how, src in (("ordinary least squares", OLS), ("gradient boosting", BOOSTING),
                              ("lasso with interactions", LASSO), ("additive splines", SPLINES),
                              ("a learning curve", CURVE))}
    assert kinds == {"regression.linear:sklearn|csv|r2", "boosting:sklearn|csv|r2",
                     "regression.lasso+interactions:sklearn|csv|r2",
                     "regression.spline:sklearn|csv|r2", "learning-curve:sklearn|csv|r2"}


def test_one_job_phrased_two_ways_is_one_kind() -> None:
    first = task_kind("Fit an OLS model of price on the housing features in housing.csv",
                      job(OLS, "r2"), ["housing.csv"])
    second = task_kind("Estimate how house prices depend linearly on every other column",
                       job(OLS, "R_squared"), ["data/housing.csv"])
    assert first == second == "regression.linear:sklearn|csv|r2"


def test_the_same_call_imported_another_way_is_the_same_analysis() -> None:
    plain = "import statsmodels.api as sm\nsm.OLS(y, X).fit()\n"
    named = "from statsmodels.api import OLS as Fit\nFit(y, X).fit()\n"
    formula = "import statsmodels.formula.api as smf\nsmf.ols('y ~ x', data=d).fit()\n"
    assert {task_kind("a", job(s)) for s in (plain, named)} == {"regression.linear:statsmodels|-|-"}
    assert job_calls(formula)[1] == ["statsmodels.formula.api.ols"]
    ttest = "from scipy import stats\nstats.ttest_ind(a, b)\n"
    assert task_kind("compare groups", job(ttest, "p_value")) == "test.t:scipy|-|p"


def test_kinds_are_not_first_words() -> None:
    """A task type made of an action's first words (the rule before kinds) does not return."""
    action = "Train the classifier on the full data set"
    kind = task_kind(action, job(BOOSTING, "r2"), ["x.csv"])
    assert "train" not in kind and "classifier-full" not in kind
    assert task_kind(action) != "train-classifier-full-data-set"
    assert task_kind("Fit the model and report it") == task_kind("Report, then fit the model")


def test_without_known_calls_the_label_then_the_action_names_the_analysis() -> None:
    source = "import mylab\nmylab.run()\n"
    labelled = job(source).model_copy(update={"analysis": "mixed-effects model"})
    assert describe_kind("do it", labelled).kind == "regression.mixed:mylab|-|-"
    assert describe_kind("do it", labelled).source == "label"
    found = describe_kind("Plot a histogram of ages from people.parquet", None,
                          ["people.parquet"])
    assert (found.kind, found.source) == ("plot:-|parquet|-", "action")
    assert task_kind("Train the model in small batches") == "task.batch-model-smal-train:-|-|-"
    assert task_kind("Do it!") == "analysis:-|-|-"


def test_the_label_never_overrides_the_calls() -> None:
    labelled = job(OLS).model_copy(update={"analysis": "gradient boosting"})
    assert kind_parts(task_kind("x", labelled))[0] == "regression.linear"


def test_why_names_the_parts() -> None:
    why = describe_kind("x", job(LASSO, "r2"), ["h.csv"]).why()
    assert "sklearn.linear_model.LassoCV" in why and "data csv" in why and "metrics r2" in why


@pytest.mark.parametrize(("wanted", "stored", "covers"), [
    ("regression:-|csv|-", "regression.linear:sklearn|csv|r2", True),
    ("regression.linear:-|csv|-", "regression.linear:sklearn|csv|r2", True),
    ("regression.linear:-|parquet|-", "regression.linear:sklearn|csv|r2", False),
    ("regression.lasso:-|csv|-", "regression.linear:sklearn|csv|r2", False),
    ("analysis:-|csv|-", "regression.linear:sklearn|csv|r2", False),
    ("train-classifier", "train-classifier", True),
])
def test_a_jobless_task_is_covered_only_by_its_family(wanted: str, stored: str,
                                                      covers: bool) -> None:
    assert kind_covers(wanted, stored) is covers


def test_unparsable_source_has_no_calls() -> None:
    assert job_calls("def (:") == ([], [])
