"""Evaluation: running a suite of research tasks with reference answers, under ablations.

``suite.py`` reads and checks a suite file (tasks as plans or goals, reference answers with
tolerances, levels; ``includes.py``: task entries kept in files of their own);
``configurations.py`` maps the full configuration and each ablation (skills, memory,
debuggers, model review) onto the run policy; ``runner.py`` starts and awaits each task's runs
through the client (``traffic.py``: the recording each goal records to or replays from,
offline skips, replay misses) and scores them (``scoring.py``: reference parts and pass@k;
``labels.py``: a formatted answer against a benchmark's labels; ``judging.py``: a gold
hypothesis, by the hypothesis judge role); ``causes.py`` puts each failed run down to a cause;
``report.py`` renders the tables (``strata.py``: per level and concept, failures by cause) and
writes the Markdown report and the raw samples; ``curve.py`` runs and draws a learning curve
(learning on, then off, task by task in order). ``imports/`` turns public benchmarks' folders
into suites. ``assay eval`` (``workers/cli/evaluate.py``) is its command.
"""

from workers.evaluation.configurations import (
    ABLATIONS,
    AblationError,
    Configuration,
    configurations,
    parse_ablations,
)
from workers.evaluation.scoring import judge, lookup, pass_at_k, score
from workers.evaluation.suite import Expect, Suite, SuiteError, SuiteTask, load_suite

__all__ = [
    "ABLATIONS",
    "AblationError",
    "Configuration",
    "Expect",
    "Suite",
    "SuiteError",
    "SuiteTask",
    "configurations",
    "judge",
    "load_suite",
    "lookup",
    "parse_ablations",
    "pass_at_k",
    "score",
]
