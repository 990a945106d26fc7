"""A synthetic but realistic skill library of any size, for the retrieval tests and benchmark.

``make_library(n)`` returns ``n`` distinct skills: first the hand-written *anchor* skills that
``queries.json`` refers to by id, then data-analysis patterns generated from families
(profiling, group comparisons, regressions, time series, text and image work…) crossed with
datasets, file types and wordings, as a library grown from many runs would hold them. The
generated patterns are the anchors' near neighbours: same methods, other datasets. Everything
is seeded, so the same ``n`` and ``seed`` give the same library.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from workflows.contracts.patterns import Skill, SkillPattern, SkillSignature, SkillStatus, slug

# name, description, context, keywords, input types, output types, tags
_Anchor = tuple[str, str, str, list[str], list[str], list[str], list[str]]

ANCHORS: list[_Anchor] = [
    ("profile-csv-table",
     "Profile every column of a CSV table: type, count, missing values, mean, spread and the "
     "most frequent values.",
     "First look at an unfamiliar tabular dataset before any analysis.",
     ["profile", "summary", "columns", "missing", "describe"], ["csv"], ["json", "md"],
     ["eda", "tabular"]),
    ("welch-t-test-two-groups",
     "Compare the mean of a numeric column between two groups with Welch's t-test and report "
     "the p-value and effect size.",
     "Two groups, one measurement; is the difference in means significant?",
     ["t-test", "welch", "two groups", "mean difference", "p-value"], ["csv"], ["json"],
     ["statistics", "hypothesis-test"]),
    ("one-way-anova",
     "One-way ANOVA of a numeric column across three or more groups, with Tukey post-hoc "
     "pairwise comparisons.",
     "More than two groups and a continuous outcome.",
     ["anova", "tukey", "groups", "variance"], ["csv"], ["json"],
     ["statistics", "hypothesis-test"]),
    ("ols-linear-regression",
     "Fit an ordinary least squares linear regression of a target on predictor columns; "
     "report coefficients, confidence intervals and R squared.",
     "Explain or predict a continuous variable from several others.",
     ["regression", "ols", "coefficients", "r squared", "predictors"], ["csv"],
     ["json", "png"], ["modelling"]),
    ("logistic-regression-classifier",
     "Train a logistic regression classifier for a yes/no outcome and report accuracy, ROC "
     "AUC and the confusion matrix.",
     "Binary classification on a table of features.",
     ["logistic", "classifier", "binary outcome", "roc auc", "confusion matrix"], ["csv"],
     ["json", "png"], ["modelling", "classification"]),
    ("correlation-matrix-heatmap",
     "Pairwise Pearson and Spearman correlations between the numeric columns, drawn as a "
     "heatmap.",
     "Which variables move together.",
     ["correlation", "pearson", "spearman", "heatmap"], ["csv"], ["png", "csv"],
     ["eda", "statistics"]),
    ("resample-time-series",
     "Resample a timestamped series to daily, weekly or monthly totals and means.",
     "Irregular timestamps that must be aggregated to a regular calendar frequency.",
     ["resample", "time series", "daily", "weekly", "monthly", "aggregate"], ["csv"],
     ["csv"], ["time-series"]),
    ("rolling-average-smoothing",
     "Smooth a noisy series with a rolling (moving) average over a window of observations.",
     "Noisy measurements over time where the trend matters more than single points.",
     ["rolling", "moving average", "window", "smoothing"], ["csv"], ["csv", "png"],
     ["time-series"]),
    ("seasonal-decomposition",
     "Decompose a time series into trend, seasonal and residual components.",
     "A series with a repeating yearly or weekly cycle.",
     ["seasonality", "trend", "decomposition", "residual"], ["csv"], ["png", "csv"],
     ["time-series"]),
    ("exponential-smoothing-forecast",
     "Forecast the next periods of a series with Holt-Winters exponential smoothing, with "
     "prediction intervals.",
     "Predict future values of a regular series.",
     ["forecast", "holt-winters", "exponential smoothing", "prediction interval"], ["csv"],
     ["csv", "png"], ["time-series", "modelling"]),
    ("iqr-outlier-detection",
     "Flag outlying rows of numeric columns with the interquartile range rule and z-scores.",
     "Suspicious extreme values that may be data entry errors.",
     ["outliers", "iqr", "z-score", "anomalies", "extreme values"], ["csv"], ["csv"],
     ["data-quality"]),
    ("kmeans-clustering",
     "Cluster the rows of a table with k-means, choosing k by silhouette score, and describe "
     "each cluster.",
     "Find natural segments in unlabelled records.",
     ["kmeans", "clusters", "silhouette", "segmentation"], ["csv"], ["csv", "png"],
     ["unsupervised"]),
    ("pca-dimensionality-reduction",
     "Principal component analysis of numeric columns: explained variance per component and "
     "a biplot of the first two.",
     "Many correlated variables to reduce to a few dimensions.",
     ["pca", "principal components", "explained variance", "dimensionality"], ["csv"],
     ["png", "csv"], ["unsupervised"]),
    ("word-frequency-count",
     "Count word frequencies in text documents, without stop words, and list the most common "
     "words.",
     "A folder of plain text files to summarise by vocabulary.",
     ["word count", "frequency", "tokens", "vocabulary"], ["txt"], ["csv"], ["text"]),
    ("review-sentiment-scoring",
     "Score the sentiment of short reviews as positive, negative or neutral and summarise "
     "the share of each.",
     "Customer opinions in free text.",
     ["sentiment", "polarity", "reviews", "opinion"], ["csv", "txt"], ["csv"],
     ["text", "nlp"]),
    ("image-pixel-statistics",
     "Per-image pixel statistics: mean brightness, contrast and a histogram of each colour "
     "channel.",
     "A set of images to compare by exposure and colour.",
     ["pixels", "brightness", "histogram", "channels", "images"], ["png", "jpg"], ["csv"],
     ["images"]),
    ("image-thumbnail-resize",
     "Resize a batch of images to thumbnails of a fixed width, keeping the aspect ratio.",
     "Large photographs to shrink for a report or a web page.",
     ["resize", "thumbnails", "aspect ratio", "images"], ["jpg", "png"], ["jpg"],
     ["images"]),
    ("join-tables-on-key",
     "Join two tables on a shared key column and report the rows that did not match.",
     "Two data files that describe the same entities.",
     ["join", "merge", "key column", "unmatched rows"], ["csv"], ["csv"], ["wrangling"]),
    ("deduplicate-records",
     "Remove duplicate rows from a table, exact or after normalising case and whitespace, and "
     "count what was dropped.",
     "Repeated records from several exports.",
     ["duplicates", "deduplicate", "unique rows"], ["csv"], ["csv"],
     ["wrangling", "data-quality"]),
    ("impute-missing-values",
     "Fill missing values: median for numeric columns, most frequent value for categories, "
     "with a report of what was filled.",
     "Gaps in the data that would break a model.",
     ["missing values", "impute", "fill", "nan"], ["csv"], ["csv"],
     ["wrangling", "data-quality"]),
    ("pivot-table-summary",
     "Pivot a table into a cross tabulation of counts or sums by two categorical columns.",
     "Totals broken down by two categories.",
     ["pivot", "crosstab", "counts", "categories"], ["csv"], ["csv"], ["wrangling"]),
    ("histogram-distribution-plot",
     "Plot the distribution of a numeric column as a histogram with a density curve and "
     "summary lines.",
     "See the shape of one variable.",
     ["histogram", "distribution", "density", "plot"], ["csv"], ["png"],
     ["visualisation"]),
    ("chi-square-independence",
     "Chi-square test of independence between two categorical columns from their contingency "
     "table.",
     "Are two categorical variables associated?",
     ["chi-square", "contingency", "independence", "categorical"], ["csv"], ["json"],
     ["statistics", "hypothesis-test"]),
    ("bootstrap-confidence-interval",
     "Bootstrap confidence interval for the mean or median of a column by resampling with "
     "replacement.",
     "Uncertainty of an estimate without distributional assumptions.",
     ["bootstrap", "confidence interval", "resampling", "median"], ["csv"], ["json"],
     ["statistics"]),
    ("flatten-json-records",
     "Flatten nested JSON records into a flat table with one column per leaf field.",
     "API exports with nested objects and lists.",
     ["json", "flatten", "nested", "normalise"], ["json"], ["csv"], ["wrangling"]),
    ("haversine-distances",
     "Great-circle (haversine) distances between pairs of latitude/longitude points, in "
     "kilometres.",
     "Locations given as coordinates.",
     ["haversine", "latitude", "longitude", "distance", "geospatial"], ["csv"], ["csv"],
     ["geo"]),
    ("kaplan-meier-survival",
     "Kaplan-Meier survival curves per group with a log-rank test on time-to-event data.",
     "Durations until an event, some of them censored.",
     ["survival", "kaplan-meier", "log-rank", "censored", "time to event"], ["csv"],
     ["png", "json"], ["statistics", "medical"]),
    ("ab-test-conversion",
     "Compare conversion rates of two variants of an A/B test with a two-proportion z-test.",
     "An experiment with a control and a treatment and success counts.",
     ["a/b test", "conversion rate", "proportions", "experiment"], ["csv"], ["json"],
     ["statistics", "experiments"]),
    ("kfold-cross-validation",
     "Evaluate a predictive model with k-fold cross-validation and report the mean and spread "
     "of the scores.",
     "How well a model generalises beyond its training data.",
     ["cross-validation", "k-fold", "model evaluation", "scores"], ["csv"], ["json"],
     ["modelling"]),
    ("random-forest-feature-importance",
     "Rank the features of a table by random forest importance and permutation importance.",
     "Which inputs drive a prediction.",
     ["random forest", "feature importance", "permutation"], ["csv"], ["csv", "png"],
     ["modelling"]),
    ("excel-sheets-to-csv",
     "Convert every sheet of an Excel workbook to its own CSV file.",
     "Spreadsheets that other tools cannot read.",
     ["excel", "xlsx", "sheets", "convert"], ["xlsx"], ["csv"], ["wrangling"]),
]


@dataclass(frozen=True)
class _Family:
    """A kind of pattern; ``{x}`` fields are filled from a dataset."""

    shorts: tuple[str, ...]
    verbs: tuple[str, ...]
    what: str
    context: str
    keywords: tuple[str, ...]
    outputs: tuple[str, ...]
    medium: str  # table, text or image


_FAMILIES: list[_Family] = [
    _Family(("profile", "summarise", "describe"), ("Profile", "Summarise", "Describe"),
            "the columns of the {noun} {kind}: missing values, ranges and common values",
            "Routine overview of {noun} exports", ("summary", "columns", "missing"),
            ("json",), "table"),
    _Family(("compare", "contrast", "group-diff"), ("Compare", "Contrast", "Test differences in"),
            "{value} between {group} groups in the {noun} {kind}",
            "Does {value} differ by {group}?", ("groups", "difference", "test"), ("json",),
            "table"),
    _Family(("regress", "model", "fit"), ("Regress", "Model", "Fit a linear model of"),
            "{value} on the other columns of the {noun} {kind}",
            "Drivers of {value} in {noun} data", ("regression", "linear", "coefficients"),
            ("json", "png"), "table"),
    _Family(("correlate", "associate", "covary"), ("Correlate", "Relate", "Measure how"),
            "{value} and the other numeric columns of the {noun} {kind} move together",
            "Relationships in {noun} data", ("correlation", "relationship"), ("png",),
            "table"),
    _Family(("resample", "aggregate", "bucket"), ("Resample", "Aggregate", "Bucket"),
            "{value} of the {noun} {kind} by {time} into regular periods",
            "Regular reporting periods for {noun} figures", ("resample", "period", "totals"),
            ("csv",), "table"),
    _Family(("smooth", "rolling", "trend"), ("Smooth", "Average", "Trace the trend of"),
            "{value} over {time} in the {noun} {kind} with a moving window",
            "Noisy {value} readings", ("rolling", "trend", "window"), ("png", "csv"),
            "table"),
    _Family(("forecast", "predict", "project"), ("Forecast", "Predict", "Project"),
            "future {value} from the {noun} {kind} history by {time}",
            "Planning ahead with {noun} data", ("forecast", "future", "prediction"),
            ("csv", "png"), "table"),
    _Family(("outliers", "anomalies", "spikes"), ("Flag", "Detect", "Find"),
            "unusual {value} values in the {noun} {kind}",
            "Checking {noun} data for errors", ("outliers", "anomaly", "unusual"), ("csv",),
            "table"),
    _Family(("cluster", "segment", "group"), ("Cluster", "Segment", "Group"),
            "{group} records of the {noun} {kind} by their {value} profile",
            "Finding types of {group} in {noun} data", ("clusters", "segments"),
            ("csv", "png"), "table"),
    _Family(("reduce", "components", "project-dims"), ("Reduce", "Decompose", "Compress"),
            "the numeric columns of the {noun} {kind} into principal components",
            "Too many {noun} variables", ("components", "variance"), ("png",), "table"),
    _Family(("impute", "fill-gaps", "complete"), ("Impute", "Fill", "Complete"),
            "missing {value} entries in the {noun} {kind}",
            "Gaps in {noun} records", ("missing", "fill"), ("csv",), "table"),
    _Family(("dedupe", "unique", "clean"), ("Deduplicate", "Clean", "Remove repeats from"),
            "the {noun} {kind}, keeping one row per {group}",
            "Repeated {noun} exports", ("duplicates", "clean"), ("csv",), "table"),
    _Family(("pivot", "crosstab", "breakdown"), ("Pivot", "Cross-tabulate", "Break down"),
            "{value} in the {noun} {kind} by {group} and {time}",
            "Totals of {noun} figures", ("pivot", "totals", "breakdown"), ("csv",), "table"),
    _Family(("histogram", "distribution", "spread"), ("Plot", "Chart", "Visualise"),
            "the distribution of {value} in the {noun} {kind}",
            "The shape of {value}", ("histogram", "distribution", "plot"), ("png",), "table"),
    _Family(("classify", "label", "score"), ("Classify", "Label", "Score"),
            "{group} records of the {noun} {kind} as high or low {value}",
            "Predicting categories in {noun} data", ("classifier", "labels", "accuracy"),
            ("json",), "table"),
    _Family(("join", "link", "combine"), ("Join", "Link", "Combine"),
            "the {noun} {kind} with its {group} reference table",
            "{noun} data spread over files", ("join", "merge", "reference"), ("csv",),
            "table"),
    _Family(("word-counts", "vocabulary", "terms"), ("Count words in", "List the vocabulary of",
                                                      "Tally terms in"),
            "the {noun} {kind}", "Summarising {noun} by their words",
            ("words", "counts", "terms"), ("csv",), "text"),
    _Family(("keywords", "tfidf", "key-phrases"), ("Extract keywords from", "Rank terms of",
                                                   "Find key phrases in"),
            "the {noun} {kind} by tf-idf", "What the {noun} are about",
            ("keywords", "tf-idf", "phrases"), ("csv",), "text"),
    _Family(("sentiment", "tone", "mood"), ("Score the sentiment of", "Rate the tone of",
                                            "Gauge the mood of"),
            "the {noun} {kind}", "Opinion in {noun}", ("sentiment", "tone"), ("csv",),
            "text"),
    _Family(("topics", "themes", "lda"), ("Find topics in", "Group themes of",
                                          "Model topics of"),
            "the {noun} {kind}", "Themes across {noun}", ("topics", "themes", "lda"),
            ("csv", "json"), "text"),
    _Family(("pixel-stats", "brightness", "exposure"), ("Measure pixels of", "Rate brightness of",
                                                        "Check exposure of"),
            "the {noun} {kind}", "Image quality of {noun}", ("pixels", "brightness"),
            ("csv",), "image"),
    _Family(("thumbnails", "resize", "shrink"), ("Make thumbnails of", "Resize", "Shrink"),
            "the {noun} {kind}", "Smaller copies of {noun}", ("resize", "thumbnails"),
            ("jpg",), "image"),
    _Family(("edges", "contours", "outlines"), ("Detect edges in", "Trace contours of",
                                                "Outline shapes in"),
            "the {noun} {kind}", "Shapes in {noun}", ("edges", "contours"), ("png",),
            "image"),
    _Family(("count-objects", "blobs", "spots"), ("Count objects in", "Count blobs in",
                                                  "Count spots in"),
            "the {noun} {kind} by thresholding", "Counting things in {noun}",
            ("objects", "threshold", "count"), ("csv",), "image"),
]

# noun, group column, value column, time column
_TABLES = [
    ("sales", "region", "revenue", "order date"),
    ("patient", "treatment arm", "recovery days", "admission date"),
    ("sensor", "device", "temperature", "reading time"),
    ("weather", "station", "rainfall", "observation date"),
    ("web traffic", "landing page", "session length", "visit time"),
    ("survey", "age band", "satisfaction score", "response date"),
    ("energy meter", "building", "kilowatt hours", "meter time"),
    ("road traffic", "junction", "vehicle count", "count time"),
    ("stock price", "ticker", "closing price", "trading day"),
    ("exam", "school", "exam score", "term"),
    ("inventory", "warehouse", "stock level", "snapshot date"),
    ("fleet", "vehicle", "fuel use", "trip date"),
    ("crop", "field", "yield", "harvest date"),
    ("air quality", "city", "particulate level", "hour"),
    ("clinical trial", "dose group", "blood pressure", "visit date"),
    ("customer", "segment", "lifetime value", "signup date"),
    ("payroll", "department", "salary", "pay date"),
    ("insurance claim", "policy type", "claim amount", "claim date"),
    ("hotel booking", "hotel", "occupancy", "night"),
    ("shipping", "carrier", "delivery time", "ship date"),
    ("fitness tracker", "member", "heart rate", "workout time"),
    ("retail basket", "store", "basket size", "purchase time"),
    ("call centre", "agent", "handling time", "call time"),
    ("river gauge", "gauge", "water level", "reading time"),
    ("production line", "line", "defect rate", "shift"),
    ("election", "district", "turnout", "election year"),
    ("housing", "neighbourhood", "sale price", "sale date"),
    ("gene expression", "sample group", "expression level", "batch"),
    ("ad campaign", "campaign", "click-through rate", "day"),
    ("parcel depot", "depot", "parcels handled", "day"),
]
_TEXTS = ["support tickets", "product reviews", "news articles", "interview transcripts",
          "research abstracts", "social media posts", "customer emails", "legal contracts",
          "recipes", "song lyrics", "forum threads", "meeting notes", "patent claims",
          "clinical notes", "job postings", "speeches", "book chapters", "chat logs"]
_IMAGES = ["microscope slides", "satellite tiles", "product photos", "x-ray scans",
           "street scenes", "plant leaves", "handwritten digits", "document scans",
           "telescope frames", "drone photos", "wildlife camera shots", "fabric samples"]
_KINDS = {"table": {"csv": "CSV table", "tsv": "TSV file", "parquet": "Parquet file",
                    "xlsx": "Excel workbook", "json": "JSON records"},
          "text": {"txt": "text files", "md": "Markdown notes", "json": "JSON export",
                   "csv": "CSV export"},
          "image": {"png": "PNG images", "jpg": "JPEG photos", "tif": "TIFF stack"}}
_SCOPES = [("", ""), ("monthly", " for each month"), ("yearly", " for each year"),
           ("recent", " over the most recent quarter"), ("by-site", " separately per site")]
_STATUSES: list[tuple[SkillStatus, float]] = [("active", 0.75), ("trial", 0.1),
                                              ("candidate", 0.08), ("retired", 0.07)]


def anchor_skills() -> list[Skill]:
    """The hand-written skills the labelled queries refer to, all active."""
    return [Skill(pattern=SkillPattern(
        name=name, description=description, context=context,
        signature=SkillSignature(keywords=keywords, input_types=inputs, output_types=outputs),
        tags=tags), status="active", origin="builtin", confidence=1.0)
        for name, description, context, keywords, inputs, outputs, tags in ANCHORS]


def _generated() -> list[tuple[_Family, int, tuple[str, str, str, str], str, tuple[str, str]]]:
    """Every combination of family, wording, dataset, file type and scope, in a fixed order."""
    combos: list[tuple[_Family, int, tuple[str, str, str, str], str, tuple[str, str]]] = []
    for family in _FAMILIES:
        if family.medium == "table":
            datasets = _TABLES
        else:
            nouns = _TEXTS if family.medium == "text" else _IMAGES
            datasets = [(noun, "source", "length", "date") for noun in nouns]
        for wording, data, ext, scope in itertools.product(
                range(len(family.verbs)), datasets, _KINDS[family.medium], _SCOPES):
            combos.append((family, wording, data, ext, scope))
    return combos


def _pattern(family: _Family, wording: int, data: tuple[str, str, str, str], ext: str,
             scope: tuple[str, str]) -> SkillPattern:
    noun, group, value, time = data
    fill = {"noun": noun, "group": group, "value": value, "time": time,
            "kind": _KINDS[family.medium][ext]}
    name = slug(f"{family.shorts[wording]} {noun} {scope[0]} {ext}")
    description = f"{family.verbs[wording]} {family.what.format(**fill)}{scope[1]}"
    return SkillPattern(
        name=name, description=_sentence(description),
        context=_sentence(family.context.format(**fill)),
        signature=SkillSignature(keywords=[*family.keywords, *noun.split()],
                                 input_types=[ext], output_types=list(family.outputs)),
        tags=[family.medium, slug(noun)])


def _sentence(text: str) -> str:
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!" else text + "."


def make_library(n: int, seed: int = 7) -> list[Skill]:
    """``n`` distinct skills: the anchors first, then generated patterns in a seeded order.

    Args:
        n: how many skills (at most the anchors plus every generated combination, ~20 000).
        seed: the seed of the order and of the statuses of the generated patterns.

    Returns:
        ``n`` skills with distinct ids; fewer than the anchors gives the first ``n`` anchors.
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    skills = anchor_skills()[:n]
    names = {s.pattern.name for s in skills}
    rng = random.Random(seed)
    combos = _generated()
    rng.shuffle(combos)
    statuses = [status for status, _ in _STATUSES]
    weights = [weight for _, weight in _STATUSES]
    for combo in combos:
        if len(skills) >= n:
            break
        pattern = _pattern(*combo)
        if pattern.name in names:
            continue
        names.add(pattern.name)
        skills.append(Skill(pattern=pattern, status=rng.choices(statuses, weights)[0],
                            confidence=round(rng.uniform(0.5, 1.0), 2)))
    if len(skills) < n:
        raise ValueError(f"the generator makes at most {len(skills)} distinct skills, not {n}")
    return skills
