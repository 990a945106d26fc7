"""What people type to change a job: ``FIELD=VALUE``, sweeps, checkpoints, metrics, names.

``assay branch`` and ``assay approve --modify`` share these parsers. Each refuses malformed or
hostile input with :class:`InputError` (the command exits 2 with its message) before anything
is sent: a field outside ``args.NAME``, ``resources.memory_mb|timeout_s|cpus`` or
``TASK:args.NAME``, control characters, giant values, empty or oversize sweeps.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from workflows.common.changes import split_path
from workflows.common.validation import field_errors
from workflows.contracts.alternatives import (
    CODE_CHARS,
    MAX_BRANCHES,
    MAX_SETS,
    BranchName,
    Direction,
    FieldPath,
    Metric,
)
from workflows.contracts.base import Scalar
from workflows.contracts.branches import MAIN_LINE, CheckpointPhase
from workflows.contracts.plan import TaskId

VALUE_CHARS = 1000
"""The longest value one ``FIELD=VALUE`` may carry."""
NAME_CHARS = 48
FIELD_FORMS = "args.NAME, resources.memory_mb|timeout_s|cpus, or TASK:args.NAME"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_FIELD: TypeAdapter[str] = TypeAdapter(FieldPath)
_NAME: TypeAdapter[str] = TypeAdapter(BranchName)
_TASK: TypeAdapter[str] = TypeAdapter(TaskId)


ModelT = TypeVar("ModelT", bound=BaseModel)


class InputError(ValueError):
    """Input refused before anything is sent; the message says what and how to fix it."""


def signed(model: type[ModelT], by: str, comment: str, what: str, **fields: Any) -> ModelT:
    """``model`` from who sends it, their comment and ``fields``, each checked as typed.

    The request names the CLI as its channel, so the run's record says how it came.

    Raises:
        InputError: control characters, or a value the model refuses (``what`` names it).
    """
    try:
        return model(by=plain(by, "--by"), comment=plain(comment, "--comment", lines=True),
                     channel="cli", **fields)
    except ValidationError as err:
        raise InputError(f"invalid {what}: "
                         + "; ".join(map(str, field_errors(err, plain=True)))) from None


def plain(text: str, what: str, *, lines: bool = False) -> str:
    """``text`` if it has no control characters (with ``lines``: newlines and tabs allowed)."""
    if (_CONTROL_BUT_LINES if lines else _CONTROL).search(text):
        raise InputError(f"{what} has control characters; type it as plain text")
    return text


def parse_value(text: str, what: str) -> Scalar:
    """A value as JSON scalar when it parses as one (``0.01``, ``3``, ``true``), else text."""
    plain(text, what)
    if not text:
        raise InputError(f"{what} has no value (for an empty text write '\"\"')")
    if len(text) > VALUE_CHARS:
        raise InputError(f"{what} has a value of {len(text):,} characters; at most "
                         f"{VALUE_CHARS:,}")
    try:
        value: Any = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return text
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{what}: {text} is not a finite number")
    return value if isinstance(value, str | int | float | bool) else text


def _no_constant(name: str) -> Any:
    """``NaN`` and ``Infinity`` stay text: they are no value a job argument can take."""
    raise ValueError(name)


def parse_field(text: str, what: str) -> str:
    """A modification's target, as ``FieldPath`` has it."""
    plain(text, what)
    try:
        return _FIELD.validate_python(text)
    except ValidationError:
        raise InputError(f"{what}: {text[:80]!r} is no field; write {FIELD_FORMS}") from None


def parse_sets(items: list[str], option: str = "--set") -> dict[str, Scalar]:
    """``FIELD=VALUE`` items as a ``set`` mapping (a field given twice is refused)."""
    if len(items) > MAX_SETS:
        raise InputError(f"{len(items)} {option} given; at most {MAX_SETS}")
    sets: dict[str, Scalar] = {}
    for item in items:
        field, text = _split(item, option)
        if field in sets:
            raise InputError(f"{option} {field} is given twice; give each field once")
        sets[field] = parse_value(text.strip(), f"{option} {field}")
    return sets


def parse_sweep(item: str) -> tuple[str, list[tuple[str, Scalar]]]:
    """``FIELD=V1,V2,...`` as the field and each value (its text, its value), in order."""
    field, text = _split(item, "--sweep")
    texts = [t.strip() for t in text.split(",")]
    if not any(texts):
        raise InputError(f"--sweep {field} has no values; write {field}=V1,V2,...")
    if len(texts) > MAX_BRANCHES:
        raise InputError(f"--sweep {field} has {len(texts)} values; one request starts at "
                         f"most {MAX_BRANCHES} branches")
    values = [(t, parse_value(t, f"--sweep {field} value {n}")) for n, t in enumerate(texts, 1)]
    seen: set[str] = set()
    for t, v in values:
        key = json.dumps(v)
        if key in seen:
            raise InputError(f"--sweep {field} has the value {t} twice")
        seen.add(key)
    return field, values


def _split(item: str, option: str) -> tuple[str, str]:
    """``FIELD=VALUE`` as its field (checked) and the value's text."""
    field, sep, text = item.partition("=")
    if not sep:
        raise InputError(f"{option} {item[:80]!r} has no '='; write FIELD=VALUE with FIELD "
                         f"{FIELD_FORMS}")
    return parse_field(field.strip(), option), text


def parse_checkpoint(text: str, option: str = "--from") -> tuple[str, CheckpointPhase]:
    """``TASK[:planned|execute|verify]`` as a task id and a phase (``planned`` by default)."""
    plain(text, option)
    task, _, phase = text.partition(":")
    phases: tuple[CheckpointPhase, ...] = get_args(CheckpointPhase)
    if phase and phase not in phases:
        raise InputError(f"{option} {text[:80]!r}: the phase is one of {', '.join(phases)}")
    try:
        task = _TASK.validate_python(task)
    except ValidationError:
        raise InputError(f"{option} {text[:80]!r}: write a task id (letters, digits, '_', '.', "
                         "'-'), then optionally :planned, :execute or :verify") from None
    return task, next(p for p in phases if p == (phase or "planned"))


def parse_metric(text: str, option: str = "--metric") -> Metric:
    """``NAME[:maximize|minimize]`` as a metric (``maximize`` by default)."""
    plain(text, option)
    name, _, direction = text.rpartition(":") if ":" in text else (text, "", "maximize")
    directions: tuple[Direction, ...] = get_args(Direction)
    if direction not in directions:
        raise InputError(f"{option} {text[:80]!r}: the direction is maximize or minimize")
    try:
        return Metric(name=name, direction=next(d for d in directions if d == direction))
    except ValidationError:
        raise InputError(f"{option} needs a name of 1 to 128 characters") from None


def check_name(name: str) -> str:
    """A branch name a person gave, refused if invalid or ``main``."""
    plain(name, "--name")
    if name == MAIN_LINE:
        raise InputError(f"{MAIN_LINE!r} names the run's own line; name the branch otherwise")
    try:
        return _NAME.validate_python(name)
    except ValidationError:
        raise InputError(f"--name {name[:80]!r}: a branch name is 1 to {NAME_CHARS} letters, "
                         "digits, '_', '.' or '-', starting with a letter or digit") from None


def name_of(*parts: str) -> str:
    """A valid branch name made of ``parts`` (``lr``, ``0.01`` -> ``lr-0.01``)."""
    made = _NOT_IN_NAME.sub("-", "-".join(p for p in parts if p)).lstrip("-_.")
    return made[:NAME_CHARS].rstrip("-_.") or "branch"


def value_name(field: str, text: str, prefix: str = "") -> str:
    """The default name of a branch setting ``field`` to ``text``: its last part, the value."""
    return name_of(prefix or split_path(field, "")[1].rpartition(".")[2], text)


def unique(names: list[str], taken: set[str]) -> list[str]:
    """``names`` with a clash (with each other or ``taken``) given a ``-2``, ``-3``... suffix."""
    used, out = {*taken, MAIN_LINE}, list[str]()
    for name in names:
        chosen, n = name, 1
        while chosen in used:
            n += 1
            chosen = f"{name[:NAME_CHARS - len(str(n)) - 1]}-{n}"
        used.add(chosen)
        out.append(chosen)
    return out


def read_code(path: Path) -> str:
    """A person's job code from ``path``: an existing UTF-8 file of at most ``CODE_CHARS``."""
    if not path.is_file():
        raise InputError(f"--code {path}: no such file")
    size = path.stat().st_size
    if size > 4 * CODE_CHARS:
        raise InputError(f"--code {path} has {size:,} bytes; job code is at most "
                         f"{CODE_CHARS:,} characters")
    try:
        code = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--code {path} is not UTF-8 text") from None
    if not code.strip():
        raise InputError(f"--code {path} is empty")
    if len(code) > CODE_CHARS:
        raise InputError(f"--code {path} has {len(code):,} characters; at most {CODE_CHARS:,}")
    return code
