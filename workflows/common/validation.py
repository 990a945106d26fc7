"""Validation errors in words: which field was refused, and why.

Plans, policies, gate decisions, stored rules and a model's answers are all validated by
pydantic, and a refusal has to say where (``decisions.2.job.entry``) and what is wrong so a
person or a model can fix it. Each place words the refusal its own way (a task label before
the field, a limit on how many are listed); the field path and message come from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import get_close_matches
from typing import NamedTuple

from pydantic import BaseModel, ValidationError


class FieldError(NamedTuple):
    """One refused field: its dotted path and pydantic's message."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def field_path(loc: Sequence[int | str], *, whole: str) -> str:
    """An error location as a dotted path (``decisions.2.job``), or ``whole`` when empty."""
    return ".".join(str(part) for part in loc) or whole


VALUE_ERROR = "Value error, "
"""What pydantic puts before the message of a validator's own ``ValueError``."""


def field_errors(err: ValidationError, *, whole: str = "value",
                 most: int | None = None, plain: bool = False) -> list[FieldError]:
    """The first ``most`` errors of ``err`` (all of them by default), in pydantic's order.

    Args:
        err: what pydantic raised.
        whole: the name of an error about the value as a whole rather than one field.
        most: how many errors to keep.
        plain: drop pydantic's ``Value error, `` before a validator's own message (for a
            person reading it; workflows keep the text they always wrote).
    """
    return [FieldError(field_path(e["loc"], whole=whole),
                       e["msg"].removeprefix(VALUE_ERROR) if plain else e["msg"])
            for e in err.errors()[:most]]


def summary(err: ValidationError, most: int = 3) -> str:
    """A validation error in one line: the first few fields and what is wrong with each."""
    items = [str(error) for error in field_errors(err)]
    more = f" (and {len(items) - most} more)" if len(items) > most else ""
    return "; ".join(items[:most]) + more


def worded_errors(err: ValidationError, model: type[BaseModel], *, whole: str = "value",
                  most: int | None = None, plain: bool = True) -> list[str]:
    """The first ``most`` errors of ``err`` in words, each naming its field.

    An unknown field is named with the nearest field ``model`` has (``unknown field 'task'
    (did you mean 'task_id'? fields: ...)``), a missing one as missing; other errors read as
    :func:`field_errors` words them. With ``plain`` false, pydantic's own words throughout.
    """
    if not plain:
        return [str(e) for e in field_errors(err, whole=whole, most=most)]
    known = list(model.model_fields)
    words: list[str] = []
    for e in err.errors()[:most]:
        where = field_path(e["loc"], whole=whole)
        if e["type"] == "extra_forbidden" and len(e["loc"]) == 1:
            near = get_close_matches(where, known, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            words.append(f"unknown field {where!r} ({hint}fields: {', '.join(known)})")
        elif e["type"] == "extra_forbidden":
            words.append(f"unknown field {where!r}")
        elif e["type"] == "missing":
            words.append(f"missing field {where!r}")
        else:
            words.append(f"{where}: {e['msg'].removeprefix(VALUE_ERROR)}")
    return words


NAME_MAX = 255
"""The longest file name a filesystem takes."""


def path_component(value: str, what: str) -> str:
    """``value`` if it names one entry of one folder: not empty, ``.`` or ``..``, no ``/``.

    Ids that become folder names on a worker (run, task, study) arrive from any Temporal
    client; this is the one check that keeps them inside the folder they are joined to.

    Raises:
        ValueError: naming ``what`` and the rule it breaks.
    """
    if (not value or value in (".", "..") or "/" in value or "\0" in value
            or len(value) > NAME_MAX):
        raise ValueError(f"{what} {value[:80]!r} must be a single path component (no '/', "
                         "not '.' or '..', at most 255 characters)")
    return value
