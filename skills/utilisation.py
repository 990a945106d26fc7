"""Whether a task used the skill or guideline it was offered: alpha_match and beta_util.

A skill offered to a task counts as retrieved; it counts as *used* (u) only when the job the
task ran shows it, and as *helped* (s) when it was used and the task completed. The rule,
with no model:

- alpha_match of a **job skill** (or subagent) is the share of the analysis calls of the
  skill's job (its imported, called names, :func:`workflows.contracts.kinds.job_calls`) that
  the task's final job still calls; 1 when it ran the skill's source unchanged, and 0 when
  the job never ran. A job with no call to compare is used only when its source ran unchanged.
- alpha_match of a **guideline** is the share of the calls its text names (in code blocks,
  backticks, or dotted or snake_case ``name(`` in prose; compared by their last name:
  ``smf.mixedlm`` and ``statsmodels.formula.api.mixedlm`` are one) that the task's final
  job calls; a guideline naming no call is judged by the modules its preconditions import,
  and one naming neither (prose) by the libraries (``statistics``, ``scipy``) and files
  (``metrics.json``) its text names: the share the job imports or names.
- A pattern is used when alpha_match >= theta = 0.3 (the threshold for a partial
  match).
  beta_util of a task is the share of the patterns offered to it that it used.

Pure functions: the library's ``record_outcomes`` reads the patterns and writes the counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from workflows.contracts.analyses import LIBRARIES
from workflows.contracts.kinds import job_calls
from workflows.contracts.plan import JobSpec
from workflows.library.patterns import SkillPattern

THETA = 0.3
"""theta: the alpha_match at and above which an offered pattern counts as used."""

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\n(.*?)```", re.DOTALL)
_TICKED = re.compile(r"`([^`\n]+)`")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\(")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_FILE = re.compile(r"[\w./-]*\w\.(?:json|csv|tsv|txt|png|svg|pdf|html|parquet|md)\b")
_GENERIC = frozenset({"print", "open", "len", "range", "str", "int", "float", "list", "dict",
                      "read_csv", "fit", "predict", "format", "append", "main", "run"})
"""Names too common to show a guideline was followed."""


def short_names(calls: Iterable[str]) -> set[str]:
    """The last names of dotted calls, lower case, common ones left out."""
    return {c.rsplit(".", 1)[-1].lower() for c in calls} - _GENERIC


def ran_calls(job: JobSpec | None) -> set[str]:
    """The short names of the calls a job's source makes (none without a source)."""
    return short_names(job_calls(job.source or "")[1]) if job is not None else set()


def job_alpha(pattern: SkillPattern, ran: JobSpec | None) -> float:
    """alpha_match of a job skill: the share of its job's calls the task's job kept."""
    own = pattern.job
    if own is None or ran is None or not ran.source:
        return 0.0
    if own.source and own.source == ran.source:
        return 1.0
    wanted = ran_calls(own)
    if not wanted:
        return 0.0
    return round(len(wanted & ran_calls(ran)) / len(wanted), 4)


def guideline_calls(text: str) -> set[str]:
    """The calls a guideline's text names, by their last name."""
    found: set[str] = set()
    for block in _FENCE.findall(text):
        found |= short_names(job_calls(block)[1]) or short_names(_CALLED.findall(block))
    rest = _FENCE.sub(" ", text)
    for ticked in _TICKED.findall(rest):
        found |= short_names(_CALLED.findall(ticked))
        if _DOTTED.match(ticked.strip()):
            found |= short_names([ticked.strip()])
    prose = _CALLED.findall(_TICKED.sub(" ", rest))  # code-like only: dotted or snake_case
    found |= short_names(c for c in prose if "." in c or "_" in c)
    return found


def guideline_alpha(pattern: SkillPattern, ran: JobSpec | None) -> float:
    """alpha_match of a guideline: the share of the calls (else imports) it names in the job."""
    if ran is None or not ran.source:
        return 0.0
    wanted = guideline_calls(pattern.guideline)
    if wanted:
        return round(len(wanted & ran_calls(ran)) / len(wanted), 4)
    imported = {m.split(".")[0] for m in job_calls(ran.source)[0]}
    modules = {m.split(".")[0] for m in pattern.preconditions.imports}
    if modules:
        return round(len(modules & imported) / len(modules), 4)
    libraries, files = prose_terms(pattern.guideline)
    if not libraries and not files:
        return 0.0
    named = {f for f in files if f in ran.source or f in ran.expected_artifacts}
    return round((len(libraries & imported) + len(named)) / (len(libraries) + len(files)), 4)


def prose_terms(text: str) -> tuple[set[str], set[str]]:
    """The libraries and the file names a prose text names."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _FILE.sub(" ", text)))
    return words & LIBRARIES, {m.rsplit("/", 1)[-1] for m in _FILE.findall(text)}


def used(alpha: float) -> bool:
    """Whether a pattern with this alpha_match counts as used."""
    return alpha >= THETA


def beta_util(alphas: Iterable[float]) -> float:
    """beta_util of a task: the share of the patterns offered to it that it used (0 if none)."""
    values = list(alphas)
    return round(sum(1 for a in values if used(a)) / len(values), 4) if values else 0.0
