"""Task kinds: what a task's job does, as one stable, readable string.

Memory's rules and templates and the skill library's extraction and matching key on a task's
kind, so two tasks share knowledge only when their jobs do the same thing. The kind is made
from the job's substance, never from how the action opens:

- the analysis the job calls, read from its Python source with :mod:`ast` (imports resolved,
  so ``sm.OLS`` and ``from statsmodels.api import OLS`` are the same call) and named by the
  family tables of :mod:`workflows.contracts.analyses`;
- the model's label of the analysis (``JobSpec.analysis``), when the calls name no family;
- the action's key terms, when neither does (a task with no job yet): the families its words
  name (``plot``, ``regression``), else its first significant words, sorted
  (``task.batch-model-smal-train``, stems);
- the libraries the analysis comes from, the kinds of data it reads (input file extensions)
  and the metrics it declares or writes.

``regression.lasso+interactions:sklearn|csv|r2`` is a lasso fit on polynomial interactions
with scikit-learn, reading CSV and reporting R². Pure functions (no I/O): workflow code may
call them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from pydantic import Field

from workflows.contracts.analyses import (
    ACTION_TERMS,
    DATA_EXTENSIONS,
    FAMILIES,
    METRIC_NAMES,
    MODIFIERS,
    SUPPORT,
)
from workflows.contracts.base import Model
from workflows.contracts.plan import JobSpec
from workflows.contracts.pysource import parse_python
from workflows.contracts.words import STOP_WORDS, slug, slug_words, stem

NONE = "-"
"""A kind's part with nothing in it."""
UNKNOWN = "analysis"
"""The family of a task whose job, label and action name no analysis."""
_MOST = 4
"""Libraries, data kinds and metrics a kind names, each (sorted, the first ones)."""
_WORDS = 4
"""Significant words of an action that name a task no table knows."""
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,7})$")


class TaskKind(Model):
    """A task's kind and the parts it was made from (what extraction says it grouped by)."""

    kind: str
    family: str
    source: str = Field(description="calls, label, action or none: what named the family")
    calls: list[str] = Field(default_factory=list[str])
    libraries: list[str] = Field(default_factory=list[str])
    data: list[str] = Field(default_factory=list[str])
    metrics: list[str] = Field(default_factory=list[str])

    def why(self) -> str:
        """One sentence naming the parts: why tasks of this kind were put together."""
        named = {"calls": f"its job calls {', '.join(self.calls) or 'no known analysis'}",
                 "label": "the model labelled the analysis so",
                 "action": "its action names it (the job calls no known analysis)",
                 "none": "nothing names the analysis"}[self.source]
        return (f"kind {self.kind}: analysis {self.family} ({named}); libraries "
                f"{', '.join(self.libraries) or 'none'}; data {', '.join(self.data) or 'none'}; "
                f"metrics {', '.join(self.metrics) or 'none'}")


def task_kind(action: str, job: JobSpec | None = None, input_names: Iterable[str] = ()) -> str:
    """The kind of a task: see :func:`describe_kind`."""
    return describe_kind(action, job, input_names).kind


def describe_kind(action: str, job: JobSpec | None = None,
                  input_names: Iterable[str] = ()) -> TaskKind:
    """A task's kind from its job's calls, label, data and metrics (its action as a fallback).

    Args:
        action: the task's action; only its key terms count, and only when neither the job's
            calls nor a model's label name the analysis.
        job: the task's job (``None``: a task that has none yet).
        input_names: the task's input files (their extensions are the data kinds).
    """
    imported, calls = job_calls(job.source or "" if job else "")
    family, matched = _family(calls)
    source = "calls"
    if not family and job is not None and job.analysis:
        family, source = _terms(job.analysis) or slug(job.analysis, limit=40, empty=UNKNOWN), \
            "label"
    if not family:
        family, source = _terms(action) or _words(action), "action"
    if not family:
        family, source = UNKNOWN, "none"
    modifiers = sorted({m for m, names in MODIFIERS if any(_names(c) & names for c in calls)})
    libraries = sorted({c.split(".")[0] for c in matched}) or sorted(
        {m.split(".")[0] for m in imported} - SUPPORT)
    data = _data(input_names, job)
    metrics = _metrics(job)
    head = "+".join([family, *modifiers]) if source == "calls" else family
    kind = f"{head}:{_part(libraries)}|{_part(data)}|{_part(metrics)}"
    return TaskKind(kind=kind, family=family, source=source, calls=sorted(matched),
                    libraries=libraries[:_MOST], data=data[:_MOST], metrics=metrics[:_MOST])


def kind_parts(kind: str) -> tuple[str, str, str, str]:
    """``(family, libraries, data, metrics)`` of a kind; a type from before kinds is all family.

    The family keeps its modifiers (``regression.lasso+interactions``).
    """
    if ":" not in kind:
        return kind, NONE, NONE, NONE
    family, _, rest = kind.partition(":")
    libraries, data, metrics = ([*rest.split("|"), NONE, NONE][:3])
    return family, libraries, data, metrics


def kind_covers(wanted: str, stored: str) -> bool:
    """Whether a task of kind ``wanted`` (often one with no job yet) may use ``stored``'s job.

    The families must agree (``regression`` covers ``regression.linear``; an unknown analysis
    covers nothing) and so must every part ``wanted`` names.
    """
    if wanted == stored:
        return True
    mine, theirs = kind_parts(wanted), kind_parts(stored)
    family = mine[0].split("+")[0]
    if family == UNKNOWN or not (theirs[0] == family or theirs[0].startswith(family + ".")
                                 or theirs[0].startswith(family + "+")):
        return False
    return all(m in (NONE, t) for m, t in zip(mine[1:], theirs[1:], strict=True))


def job_calls(source: str) -> tuple[list[str], list[str]]:
    """``(modules imported, dotted names called)`` of a job's Python source.

    A called name counts only when it resolves through an import (``np.mean`` ->
    ``numpy.mean``); a method of a value (``model.fit``) does not. Unparsable source has none.
    """
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return [], []
    aliases: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}"
                            for a in node.names if a.name != "*"})
    calls: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _dotted(node.func)):
            head, _, rest = name.partition(".")
            if head in aliases:
                calls.add(aliases[head] + (f".{rest}" if rest else ""))
    return sorted(modules), sorted(calls)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return ""


def _names(call: str) -> set[str]:
    """A call's lower-case name parts after its package, and its last two joined."""
    parts = call.lower().split(".")[1:]
    return {*parts, ".".join(parts[-2:])}


def _family(calls: list[str]) -> tuple[str, list[str]]:
    """The first family one of the calls names, and the calls that name it."""
    for family, names in FAMILIES:
        matched = [c for c in calls if _names(c) & names]
        if matched:
            return family, matched
    return "", []


def named_families(text: str) -> list[str]:
    """The analysis families a text's key terms name (``a t-test`` -> ``test.t``), sorted.

    A family is left out when a more specific one of it is named too.
    """
    words = " " + " ".join(slug_words(text.replace("-", " "))) + " "
    found: list[str] = []
    for phrase, family in ACTION_TERMS:
        spaced = " " + " ".join(slug_words(phrase.replace("-", " ")))
        if spaced in words and family not in found:
            found.append(family)
    return sorted(f for f in found if not any(o != f and o.startswith(f + ".") for o in found))


def _terms(text: str) -> str:
    """The families an action's key terms name, joined (``plot+profile``); empty if none."""
    return "+".join(named_families(text)[:3])


def _words(action: str) -> str:
    """``task.`` and the stems of an action's first significant words, sorted (order-free)."""
    found: list[str] = []
    for word in slug_words(action):
        stemmed = stem(word)
        if word not in STOP_WORDS and len(word) > 2 and not word.isdigit() \
                and stemmed not in found:
            found.append(stemmed)
    return "task." + "-".join(sorted(found[:_WORDS])) if found else ""


def _data(input_names: Iterable[str], job: JobSpec | None) -> list[str]:
    names = list(input_names)
    if job is not None:
        names.extend(v for v in job.args.values() if isinstance(v, str))
    found = {m.group(1).lower() for n in names if (m := _EXTENSION.search(n.strip()))}
    return sorted(found & DATA_EXTENSIONS)


def _metrics(job: JobSpec | None) -> list[str]:
    """The metrics a job declares, and the keys of what it writes with ``json.dump``."""
    if job is None:
        return []
    names = list(job.expected_metrics)
    try:
        tree = parse_python(job.source or "")
    except (SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and _dotted(node.func) in ("json.dump", "json.dumps")
                and node.args and isinstance(node.args[0], ast.Dict)):
            names.extend(k.value for k in node.args[0].keys
                         if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return sorted({_metric(n) for n in names if n.strip()})


def _metric(name: str) -> str:
    plain = "_".join(slug_words(name))
    named = METRIC_NAMES.get(name.strip().lower()) or METRIC_NAMES.get(plain) or plain
    return slug(named, limit=32, empty="metric")


def _part(values: list[str]) -> str:
    return "+".join(values[:_MOST]) or NONE
