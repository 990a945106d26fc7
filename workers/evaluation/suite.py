"""An evaluation suite: research tasks with a reference answer and a level, read from JSON.

A suite file (``suite.json``) lists tasks; each is a plan file beside the suite, or a goal in
words with its data files (and the recording of model traffic that answers it offline), plus
what a correct run shows in its results JSON: numbers within tolerances, or comparisons, at
paths such as ``tasks.fit.metrics.slope``. Everything that can be wrong with a suite is found
here, before any run starts: a task with no reference answer, a missing file, a duplicate
id, an unknown field. ``include`` adds tasks kept in files of their own
(``workers.evaluation.includes``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workers.evaluation.includes import IncludeError, included_tasks
from workers.intake.jsonfile import JsonFileError, read_json
from workflows.common.answer_format import AnswerFormatError, format_names
from workflows.common.validation import field_errors

MAX_SUITE_BYTES = 2_000_000
TaskId = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[a-z0-9][a-z0-9_-]*$")]
Op = Literal["==", "!=", "<", "<=", ">", ">="]


class SuiteError(ValueError):
    """The suite cannot be run; the message says what, where and how to fix it."""


class Strict(BaseModel):
    """Suite models refuse fields they do not know (a misspelt ``abs_tol`` is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Expect(Strict):
    """One part of a reference answer: the value at ``path`` of the results JSON.

    With ``value`` a number, the run's number must be within ``abs_tol`` or ``rel_tol`` of it
    (either suffices; both 0: exactly). With ``op``, the run's value is compared to ``value``
    (``p_value < 0.05``). Otherwise the values must be equal (a status, a name, a flag).
    """

    path: str = Field(min_length=1, max_length=300)
    value: float | int | str | bool | None
    op: Op | None = None
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    magnitude: bool = False
    """Compare the number's absolute value (a difference whose sign depends on which group
    a run puts first)."""

    @model_validator(mode="after")
    def _tolerance_goes_with_a_number(self) -> Self:
        numeric = isinstance(self.value, int | float) and not isinstance(self.value, bool)
        if (self.abs_tol or self.rel_tol) and (not numeric or self.op is not None):
            raise ValueError("abs_tol and rel_tol go with a numeric value and no op")
        return self


class SuiteTask(Strict):
    """One research task of the suite, its reference answer and its level (1 easy - 3 hard)."""

    id: TaskId
    level: Literal[1, 2, 3]
    topic: str = Field(default="", max_length=60)
    plan: str | None = None
    """A plan file (``plan.json`` schema), relative to the suite file."""
    goal: str | None = Field(default=None, max_length=4000)
    data: list[str] = Field(default_factory=list[str], max_length=20)
    """A goal's data files, relative to the suite file."""
    replay: str | None = None
    """A goal's recorded model traffic, replayed when no key is configured."""
    expect: list[Expect] = Field(default_factory=list[Expect], max_length=50)
    answer_format: str | None = Field(default=None, max_length=2000)
    """The format a goal's answer must take (``@name[...]`` fields; see
    ``workflows.common.answer_format``)."""
    labels: dict[str, str] = Field(default_factory=dict[str, str], max_length=50)
    """The reference value of each field of ``answer_format``: every one must match, numbers
    within the format's rounding."""
    hypothesis: str | None = Field(default=None, max_length=4000)
    """A gold hypothesis the run's answer is judged against by the judge role (context,
    variables, relationship)."""
    judge_replay: str | None = None
    """The hypothesis judge's recorded traffic, replayed when no key is configured."""
    concepts: list[str] = Field(default_factory=list[str], max_length=10)
    """What the task exercises, for scores per concept (none: its topic)."""

    @model_validator(mode="after")
    def _plan_or_goal_with_a_reference(self) -> Self:
        if (self.plan is None) == (self.goal is None):
            raise ValueError("give either `plan` (a plan file) or `goal` (a goal in words)")
        if self.plan is not None and (self.data or self.replay or self.answer_format):
            raise ValueError("`data`, `replay` and `answer_format` go with a goal; a plan "
                             "names its inputs")
        if bool(self.labels) != bool(self.answer_format):
            raise ValueError("`labels` and `answer_format` go together: the labels are the "
                             "values of the format's @name[...] fields")
        if self.answer_format:
            _check_format(self.answer_format, self.labels)
        if self.hypothesis is not None and self.goal is None:
            raise ValueError("`hypothesis` goes with a goal")
        if not self.expect and not self.labels and not self.hypothesis:
            raise ValueError("no reference answer: add `expect`, a list of {path, value} "
                             "(with abs_tol/rel_tol, or an op) the run's results must show, "
                             "or `answer_format` with its `labels`, or a `hypothesis`")
        return self

    def files(self) -> list[tuple[str, str]]:
        """(field, relative path) of every file the task names."""
        named = [("plan", self.plan), ("replay", self.replay),
                 ("judge_replay", self.judge_replay)]
        return [(k, v) for k, v in named if v] + [("data", d) for d in self.data]


class Suite(Strict):
    """A named list of tasks with unique ids."""

    name: str = Field(min_length=1, max_length=80)
    description: str = Field(default="", max_length=2000)
    tasks: list[SuiteTask] = Field(min_length=1, max_length=500)
    include: list[str] = Field(default_factory=list[str], max_length=20)
    """Glob patterns (``goals/*/task.json``) of files holding one task entry each, relative
    to the suite file; their tasks follow the listed ones (``workers.evaluation.includes``)."""

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        seen: set[str] = set()
        twice = sorted({t.id for t in self.tasks if t.id in seen or seen.add(t.id)})
        if twice:
            raise ValueError(f"task ids must be unique: {', '.join(twice)} appear twice")
        return self


def _check_format(answer_format: str, labels: dict[str, str]) -> None:
    """A format naming fields, with a label for each (ValueError saying which is missing)."""
    try:
        names = format_names(answer_format)
    except AnswerFormatError as err:
        raise ValueError(str(err)) from None
    unlabelled = [n for n in names if n not in labels]
    unknown = [n for n in labels if n not in names]
    if unlabelled or unknown:
        raise ValueError(f"labels {sorted(labels)} do not match the format's fields {names}")


def load_suite(path: Path) -> tuple[Suite, Path]:
    """The checked suite and the folder its paths are relative to.

    Raises:
        SuiteError: unreadable or invalid file, a task's file missing or outside the folder.
    """
    try:
        raw: Any = read_json(path, what="suite", max_bytes=MAX_SUITE_BYTES)
    except JsonFileError as err:
        raise SuiteError(str(err)) from None
    if isinstance(raw, dict):
        raw = _with_includes(cast(dict[str, Any], raw), path)
    try:
        suite = Suite.model_validate(raw)
    except ValidationError as err:
        lines = "\n  ".join(str(e) for e in field_errors(err, whole="suite", most=10,
                                                         plain=True))
        raise SuiteError(f"{path}: invalid suite:\n  {_named(lines, raw)}") from None
    base = path.resolve().parent
    for task in suite.tasks:
        for field, relative in task.files():
            resolve(base, relative, f"{path}: task {task.id}: {field}")
    return suite, base


def _with_includes(document: dict[str, Any], path: Path) -> dict[str, Any]:
    """The suite document with its included tasks appended to ``tasks``."""
    patterns = document.get("include")
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in
                                                  cast(list[Any], patterns)):
        return document  # validation says what is wrong with it
    try:
        added = included_tasks(cast(list[str], patterns), path.resolve().parent)
    except IncludeError as err:
        raise SuiteError(f"{path}: {err}") from None
    listed = document.get("tasks", [])
    tasks = cast(list[Any], listed) if isinstance(listed, list) else []
    merged: dict[str, Any] = {**document, "tasks": [*tasks, *added]}
    return merged


def resolve(base: Path, relative: str, where: str) -> Path:
    """``base / relative``, refused when it is not a file."""
    found = (base / relative).resolve()
    if not found.is_file():
        raise SuiteError(f"{where}: {relative!r} does not exist ({found}); paths are "
                         "relative to the suite file")
    return found


def _named(lines: str, raw: Any) -> str:
    """Error lines with ``tasks.3`` also naming the task's id, where the raw file gives one."""
    document = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
    tasks = document.get("tasks")
    listed = cast(list[Any], tasks) if isinstance(tasks, list) else []
    ids = [cast(dict[str, Any], t).get("id") if isinstance(t, dict) else None for t in listed]

    def name(match: re.Match[str]) -> str:
        index = int(match.group(1))
        known = ids[index] if index < len(ids) else None
        return f"{match.group(0)} ({known})" if isinstance(known, str) else match.group(0)

    return re.sub(r"\btasks\.(\d+)\b", name, lines)
