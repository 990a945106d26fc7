"""Applying a pattern: its preconditions checked, its parameters filled, its job instantiated.

Parameters are filled from the goal (or the task's action) and the data given with it: a data
input takes the given file of its type (the one the text names, else the first); a number
takes the value the text gives next to the parameter's words (``batch size 32``,
``alpha=0.01``), else its default; an enumeration takes the option the text names, else its
default; a column parameter takes the column of the data's header the text names (a model's
response or explanatory variable the one the text puts in that role: ``the response rises
with the dose``), else its default. A value outside the parameter's range is a problem, never
clipped: the pattern is then not applied and planning decides.
"""

from __future__ import annotations

import csv
import importlib.util
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from workflows.contracts.patterns import SkillParameter, SkillPattern
from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.words import word_stems

_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)"


@dataclass
class Fit:
    """How a pattern fits a task: preconditions, filled parameters and the problems."""

    checks: int = 0
    held: int = 0
    values: dict[str, Scalar] = field(default_factory=dict[str, Scalar])
    inputs: list[str] = field(default_factory=list[str])
    problems: list[str] = field(default_factory=list[str])

    @property
    def holds(self) -> bool:
        """Every precondition holds and every parameter has a valid value."""
        return not self.problems

    @property
    def score(self) -> float:
        """Share of preconditions that hold (1.0 when there are none)."""
        return round(self.held / self.checks, 4) if self.checks else 1.0


def extension(name: str) -> str:
    """A file name's extension, lowercased, without the dot (``""`` if none)."""
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def importable(module: str) -> bool:
    """Whether the job interpreter (this worker's) can import ``module``."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def mentions(stems: set[str], keyword: str) -> bool:
    """Whether a text of these word stems mentions ``keyword`` in any of its forms.

    Both sides go through the same stemmer (``depends`` matches "depend", ``linear``
    matches "linearly"); a keyword of several words (``t-test``) needs every one of them.
    """
    wanted = word_stems(keyword)
    return bool(wanted) and wanted <= stems


def fit(pattern: SkillPattern, text: str, data_names: Sequence[str], *,
        can_import: Callable[[str], bool] = importable,
        headers: Mapping[str, Sequence[str]] | None = None) -> Fit:
    """Check ``pattern``'s preconditions against a goal or action and its data; fill values.

    A precondition keyword holds when the text has it in any word form (:func:`mentions`).
    ``headers`` (data name -> its columns) lets a column parameter take the column the text
    names (:func:`_column`).
    """
    columns = list(dict.fromkeys(c for n in data_names for c in (headers or {}).get(n, ())))
    used_columns: set[str] = set()
    found = Fit()
    lowered = text.lower()
    stems = word_stems(text)
    pre = pattern.preconditions
    if pre.keywords:
        found.checks += 1
        if any(mentions(stems, k) for k in pre.keywords):
            found.held += 1
        else:
            found.problems.append(f"none of the words {pre.keywords[:8]} occurs in the text, "
                                  "in any form")
    for ext in pre.input_types:
        found.checks += 1
        if any(extension(n) == ext.lower() for n in data_names):
            found.held += 1
        else:
            found.problems.append(f"no {ext} data file was given")
    for module in pre.imports:
        found.checks += 1
        if can_import(module):
            found.held += 1
        else:
            found.problems.append(f"module {module!r} is not installed for jobs")
    taken: set[str] = set()
    for param in pattern.parameters:
        value = (_column(param, text, columns, used_columns) if _is_column(param) and columns
                 else None)
        if value is None:
            value = _value(param, text, lowered, data_names, taken)
        else:
            used_columns.add(value)
        if value is None:
            found.problems.append(f"parameter {param.name!r} has no value: the text gives "
                                  "none and it has no default")
            continue
        problem = param.problem(value)
        if problem is not None:
            found.problems.append(problem)
            continue
        found.values[param.name] = value
        if param.target == "input" and isinstance(value, str):
            taken.add(value)
            found.inputs.append(value)
    return found


def _value(param: SkillParameter, text: str, lowered: str, data_names: Sequence[str],
           taken: set[str]) -> Scalar | None:
    if param.target == "input" or param.type == "file_path":
        return _data_file(param, lowered, data_names, taken)
    if param.type in ("integer", "number"):
        given = _number_near(param.name, text)
        if given is not None:
            return int(given) if param.type == "integer" and given.is_integer() else given
        return param.default
    if param.type == "enum":
        for option in param.options:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option.lower())}\b",
                                                     lowered):
                return option
        return param.default
    return param.default


def _is_column(param: SkillParameter) -> bool:
    """Whether ``param`` names a column of the data (a text parameter called or said so)."""
    return param.type == "string" and param.target == "arg" and (
        "column" in param.name.lower() or "column" in param.description.lower())


_GROUPING = r"(?:by|per|across|between|each|within|grouped\s+by|groups?\s+in)"


def _column(param: SkillParameter, text: str, columns: Sequence[str], used: set[str]
            ) -> str | None:
    """The column of the data's header the text names for ``param``, if it names one.

    ``value_column=revenue`` or ``value column revenue`` names it outright; otherwise a
    grouping parameter (``group``, ``by`` or ``category`` in its name) takes a named column
    after ``by``, ``per``, ``across`` …, and any other column parameter the first column the
    text names that no parameter took yet. ``None``: the text names none (the default stays).
    """
    label = r"[\s_\-]*".join(re.escape(w) for w in re.split(r"[_\-\s]+", param.name) if w)
    spots = {c: _spots(c, text) for c in columns}
    for column in columns:
        if re.search(rf"\b{label}\b\s*(?:=|:|is|of)?\s*[`'\"]?{_pattern(column)}", text,
                     re.IGNORECASE):
            return column
    role = _role(param)
    if role is not None:
        said = _relation(text, [c for c, found in spots.items() if found])
        if said is not None and said[role] not in used:
            return said[role]
    named = sorted((spot, c) for c, found in spots.items() for spot in found if c not in used)
    grouping = any(w in param.name.lower() for w in ("group", "by", "category", "class"))
    for at, column in named:
        before = text[max(0, at - 24):at]
        follows_grouping = re.search(rf"\b{_GROUPING}\s+(?:the\s+)?[`'\"]?$", before,
                                     re.IGNORECASE) is not None
        if follows_grouping == grouping:
            return column
    return None


_RESPONSE = frozenset({"y", "response", "outcome", "target", "dependent"})
_EXPLANATORY = frozenset({"x", "explanatory", "predictor", "feature", "independent",
                          "covariate", "regressor"})
_CHANGES = (r"(?:rises?|increases?|decreases?|falls?|grows?|changes?|varies|vary|depends?"
            r"|scales?|declines?|drops?)")


def _role(param: SkillParameter) -> Literal["response", "explanatory"] | None:
    """Whether a column parameter is a model's response (y) or explanatory (x) variable."""
    name = param.name.lower()
    words = set(re.split(r"[^a-z]+", f"{name} {param.description.lower()}"))
    if name == "y" or words & _RESPONSE:
        return "response"
    if name == "x" or words & _EXPLANATORY:
        return "explanatory"
    return None


def _relation(text: str, named: Sequence[str]) -> dict[str, str] | None:
    """Which named column the text makes the response and which the explanatory variable.

    In this order: ``the effect of dose on response``, ``predict price from area``, ``the
    response rises with the dose``, ``regress weight on height`` (``yield against
    rainfall``), ``the relation between dose and response``; ``None`` when the text says no
    such thing of two of its columns.
    """
    the = r"\s+(?:the\s+)?"
    shapes = [  # <Y> the response, <X> the explanatory column; most explicit first
        rf"\b(?:effect|influence|impact)\s+of{the}<X>\s+on{the}<Y>",
        rf"\bpredict{the}<Y>\s+from{the}<X>",
        rf"<Y>\s+(?:\w+\s+){{0,2}}?{_CHANGES}\b(?:\s+\w+){{0,2}}?\s+(?:with|on){the}<X>",
        rf"(?<!\bof\s)<Y>\s+(?:against|versus|vs\.?|on){the}<X>",
        rf"\bbetween{the}<X>\s+and{the}<Y>",
    ]
    for shape in shapes:
        for a in named:
            for b in named:
                found = shape.replace("<Y>", _pattern(a)).replace("<X>", _pattern(b))
                if a != b and re.search(found, text, re.IGNORECASE):
                    return {"response": a, "explanatory": b}
    return None


def _pattern(column: str) -> str:
    """A regex for ``column`` as a text writes it (``unit_price`` also as ``unit price``)."""
    words = [re.escape(w) for w in re.split(r"[_\s]+", column) if w]
    return r"\b" + r"[_\s]+".join(words) + r"\b" if words else re.escape(column)


def _spots(column: str, text: str) -> list[int]:
    """Where ``text`` names ``column`` (start offsets), case aside."""
    return [m.start() for m in re.finditer(_pattern(column), text, re.IGNORECASE)]


def header_columns(head: str) -> list[str]:
    """The column names of a delimited text file's first line (comma, tab or semicolon)."""
    first = head.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    if not first.strip():
        return []
    delimiter = max((",", "\t", ";"), key=first.count)
    empty: list[str] = []
    row = next(csv.reader([first], delimiter=delimiter), empty)
    return [c.strip() for c in row if c.strip()][:500]


def _data_file(param: SkillParameter, lowered: str, data_names: Sequence[str],
               taken: set[str]) -> str | None:
    wanted = [e.lower() for e in param.extensions]
    fitting = [n for n in data_names if n not in taken
               and (not wanted or extension(n) in wanted)]
    if not fitting:
        return None
    named = [n for n in fitting if n.lower() in lowered]
    return (named or fitting)[0]


def _number_near(name: str, text: str) -> float | None:
    """The number the text gives for ``name`` (``batch_size`` ~ ``batch size``), if any."""
    words = [w for w in re.split(r"[_\-\s]+", name) if w]
    if not words:
        return None
    label = r"[\s_\-]*".join(re.escape(w) for w in words)
    match = re.search(rf"\b{label}\b\s*(?:of|=|:|to|is|at)?\s*{_NUMBER}", text, re.IGNORECASE)
    return float(match.group(1)) if match else None


def instantiate(pattern: SkillPattern, values: dict[str, Scalar]) -> JobSpec:
    """The pattern's job with its parameters' values as arguments.

    Raises:
        ValueError: the pattern has no job template.
    """
    if pattern.job is None:
        raise ValueError(f"skill {pattern.skill_id} is guideline text and has no job")
    args = dict(pattern.job.args)
    for param in pattern.parameters:
        if param.name not in values:
            continue
        if param.target == "arg" or param.name in args:
            args[param.name] = values[param.name]
    return pattern.job.model_copy(update={"args": args}, deep=True)


def fill_text(template: str, values: dict[str, Scalar]) -> str:
    """``template`` with ``{name}`` replaced by parameter values; unknown names stay."""
    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}",
                  lambda m: str(values.get(m.group(1), m.group(0))), template)
