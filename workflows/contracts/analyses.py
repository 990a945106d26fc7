"""The vocabulary task kinds are made from: analysis families, support libraries, metric names.

A task's kind (:mod:`workflows.contracts.kinds`) names the analysis its job calls. The tables
here say which called names make which family (``sklearn.linear_model.Lasso`` ->
``regression.lasso``), which libraries only load, shape or draw data and so say nothing of
the analysis (pandas, numpy, matplotlib), how metric names are spelled once (``r_squared`` ->
``r2``) and which words of an action name a family when the job calls none the tables know.
Kinds key stored memory and name skills: extend the tables, never reorder or rename entries.
"""

from __future__ import annotations

FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("learning-curve", frozenset({"learning_curve", "validation_curve"})),
    ("regression.spline", frozenset({
        "splinetransformer", "lineargam", "logisticgam", "poissongam", "gammagam", "glmgam",
        "bsplines", "univariatespline", "make_interp_spline", "smoothbivariatespline"})),
    ("regression.mixed", frozenset({"mixedlm", "mixedlm.from_formula"})),
    ("regression.lasso", frozenset({"lasso", "lassocv", "lassolars", "lassolarscv",
                                    "lassolarsic", "multitasklasso"})),
    ("regression.ridge", frozenset({"ridge", "ridgecv", "kernelridge"})),
    ("regression.elasticnet", frozenset({"elasticnet", "elasticnetcv"})),
    ("boosting", frozenset({
        "gradientboostingregressor", "gradientboostingclassifier",
        "histgradientboostingregressor", "histgradientboostingclassifier", "xgbregressor",
        "xgbclassifier", "lgbmregressor", "lgbmclassifier", "catboostregressor",
        "catboostclassifier", "adaboostregressor", "adaboostclassifier"})),
    ("forest", frozenset({"randomforestregressor", "randomforestclassifier",
                          "extratreesregressor", "extratreesclassifier"})),
    ("classification.logistic", frozenset({"logisticregression", "logisticregressioncv",
                                           "logit"})),
    ("regression.glm", frozenset({"glm", "poissonregressor", "tweedieregressor",
                                  "gammaregressor"})),
    ("regression.linear", frozenset({"linearregression", "ols", "wls", "gls", "lstsq",
                                     "linregress", "polyfit", "theilslopes"})),
    ("survival", frozenset({"kaplanmeierfitter", "coxphfitter", "coxph"})),
    ("timeseries", frozenset({"arima", "sarimax", "exponentialsmoothing", "prophet",
                              "seasonal_decompose"})),
    ("test.t", frozenset({"ttest_ind", "ttest_rel", "ttest_1samp", "ttest_ind_from_stats"})),
    ("test.rank", frozenset({"mannwhitneyu", "wilcoxon", "kruskal", "ranksums"})),
    ("test.chi2", frozenset({"chi2_contingency", "chisquare", "fisher_exact"})),
    ("test.anova", frozenset({"f_oneway", "anova_lm", "pairwise_tukeyhsd"})),
    ("correlation", frozenset({"pearsonr", "spearmanr", "kendalltau", "pointbiserialr"})),
    ("clustering", frozenset({"kmeans", "minibatchkmeans", "dbscan", "hdbscan",
                              "agglomerativeclustering", "gaussianmixture", "linkage"})),
    ("decomposition", frozenset({"pca", "tsne", "umap", "nmf", "factoranalysis",
                                 "truncatedsvd", "fastica"})),
    ("neural", frozenset({"mlpregressor", "mlpclassifier", "sequential"})),
    ("neighbours", frozenset({"kneighborsregressor", "kneighborsclassifier"})),
    ("svm", frozenset({"svr", "svc", "linearsvc", "linearsvr"})),
    ("bootstrap", frozenset({"bootstrap"})),
)
"""Analysis families, most specific first: the first family one of a job's calls names wins
(a learning curve also fits a model; a spline pipeline also fits a linear one)."""

MODIFIERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("interactions", frozenset({"polynomialfeatures"})),
    ("tuned", frozenset({"gridsearchcv", "randomizedsearchcv"})),
)
"""Calls that change what a family's job does enough to be another kind of it."""

SUPPORT = frozenset({
    "__future__", "pandas", "numpy", "matplotlib", "seaborn", "plotly", "json", "csv", "os",
    "sys", "pathlib",
    "math", "random", "re", "time", "datetime", "argparse", "logging", "collections",
    "itertools", "functools", "typing", "dataclasses", "pickle", "joblib", "warnings", "io",
    "shutil", "glob", "hashlib", "statistics", "textwrap", "tqdm", "polars", "pyarrow",
})
"""Libraries that load, shape, save or draw data: they name no analysis."""

LIBRARIES = SUPPORT | frozenset({
    "scipy", "statsmodels", "sklearn", "xgboost", "lightgbm", "catboost", "pygam", "astropy",
    "torch", "tensorflow", "keras", "jax", "lifelines", "prophet", "umap", "hdbscan",
    "networkx", "sympy", "pymc", "arviz", "emcee", "patsy", "linearmodels", "pingouin",
    "shap", "skimage", "cv2", "PIL", "h5py", "netCDF4", "xarray", "geopandas", "shapely",
    "rdkit", "Bio", "pysam", "scanpy", "anndata", "numba", "dask", "duckdb", "sqlalchemy",
})
"""Libraries a text may name (``scipy``, ``statistics``): a prose guideline's key terms."""

METRIC_NAMES = {
    "r_squared": "r2", "rsquared": "r2", "r2_score": "r2", "r_2": "r2", "adj_r2": "r2-adj",
    "adjusted_r2": "r2-adj", "rsquared_adj": "r2-adj", "root_mean_squared_error": "rmse",
    "mean_squared_error": "mse", "mean_absolute_error": "mae", "roc_auc": "auc",
    "auroc": "auc", "acc": "accuracy", "pvalue": "p", "p_value": "p", "pval": "p",
    "t_stat": "t", "tstat": "t", "t_statistic": "t", "statistic": "stat", "coef": "coef",
    "coefficients": "coef", "slope": "coef", "f1_score": "f1",
}
"""Spellings of one metric, mapped to the one name a kind uses."""

DATA_EXTENSIONS = frozenset({
    "csv", "tsv", "txt", "json", "jsonl", "parquet", "feather", "xlsx", "xls", "h5", "hdf5",
    "nc", "fits", "fit", "npy", "npz", "pkl", "sav", "dta", "sqlite", "db", "xml", "png",
    "jpg", "tif", "tiff", "fasta", "fastq", "vcf", "bam", "sdf", "pdb", "mat",
})
"""File extensions that name a kind of data."""

ACTION_TERMS: tuple[tuple[str, str], ...] = (
    ("learning curve", "learning-curve"), ("spline", "regression.spline"),
    ("additive model", "regression.spline"), ("mixed effect", "regression.mixed"),
    ("mixed model", "regression.mixed"), ("lasso", "regression.lasso"),
    ("ridge", "regression.ridge"), ("elastic net", "regression.elasticnet"),
    ("boost", "boosting"), ("random forest", "forest"), ("logistic", "classification.logistic"),
    ("least squares", "regression.linear"), ("linear regression", "regression.linear"),
    ("regression", "regression"), ("t-test", "test.t"), ("t test", "test.t"),
    ("anova", "test.anova"), ("chi-square", "test.chi2"), ("chi square", "test.chi2"),
    ("mann-whitney", "test.rank"), ("correlat", "correlation"), ("cluster", "clustering"),
    ("principal component", "decomposition"), ("pca", "decomposition"),
    ("survival", "survival"), ("forecast", "timeseries"), ("time series", "timeseries"),
    ("classif", "classification"), ("bootstrap", "bootstrap"), ("simulat", "simulation"),
    ("plot", "plot"), ("chart", "plot"), ("figure", "plot"), ("histogram", "plot"),
    ("visuali", "plot"), ("profil", "profile"), ("summar", "profile"), ("describ", "profile"),
    ("clean", "cleaning"), ("impute", "cleaning"), ("merge", "join"), ("join", "join"),
    ("download", "fetch"), ("fetch", "fetch"), ("convert", "convert"), ("fits", "io.fits"),
)
"""Phrases of an action (lower case, matched as word starts) and the family each names, used
only when the job calls no known analysis and no model labelled it."""
