"""Reading JSON a job wrote (``metrics.json``), bounded: a job's output cannot fail the worker.

The job controls every byte. Parsed naively, 100,000 nested brackets exhaust the parser's
recursion (``RecursionError``, so the activity failed and the job was run again for its own
bad output); a few hundred pass the parser but break the payload converter when the outcome
is sent to Temporal; so do lone surrogates (escapes of code points D800 to DFFF, which are not
Unicode); and ``NaN``, ``Infinity`` or ``1e999`` turned silently into ``null``. Each is
refused here with its reason, as an empty result and a message: the activity still returns
its outcome, with the message in ``metrics_error``, and verification fails naming it
(reflection calls this ``invalid_metrics``). Every place a worker reads job-written JSON goes
through :func:`read_json_object`.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any, cast

MAX_DEPTH = 32
"""Nesting of arrays and objects allowed. Metrics are meant to be flat; the payload
converter refuses about 200 levels, and the outcome itself sits a few levels down in the
results that carry it."""
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_STRING = re.compile(r'"[^"]*"')
_BRACKETS = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_MAX_WHERE = 200


class _Refused(ValueError):
    """A value JSON may spell but Assay does not store (NaN, infinities)."""


def read_json_object(path: Path, max_bytes: int) -> tuple[dict[str, Any], str | None]:
    """Parse the file at ``path`` as a JSON object; on trouble, an empty dict and what was wrong.

    A missing file is no trouble (``{}`` and ``None``). The file is opened without following a
    link and read at most ``max_bytes`` (+1, to notice a larger one).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}, None
    except OSError as err:
        if err.errno == errno.ELOOP:
            return {}, f"{path.name} must be a regular file (not a link or directory)"
        return {}, f"{path.name} cannot be read ({err.strerror})"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return {}, f"{path.name} must be a regular file (not a link or directory)"
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        return {}, (f"{path.name} is {max(info.st_size, len(raw))} bytes; metrics are limited "
                    f"to {max_bytes} bytes: write large results as artifacts instead")
    return parse_json_object(raw, path.name)


def parse_json_object(raw: bytes, name: str) -> tuple[dict[str, Any], str | None]:
    """Parse ``raw`` (from the file ``name``) as a JSON object Assay can store and send.

    Returns:
        The object and ``None``, or ``{}`` and why it was refused: not UTF-8, nested deeper
        than :data:`MAX_DEPTH`, not JSON, not an object, ``NaN``/``Infinity``/a number too
        large for a float, or a string that is not Unicode (a lone surrogate).
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return {}, f"{name} is not UTF-8 text ({err.reason} at byte {err.start})"
    if _too_deep(text):
        return {}, (f"{name} nests arrays or objects more than {MAX_DEPTH} levels deep; "
                    "keep metrics flat (names to numbers or strings)")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except _Refused as err:
        return {}, f"{name} holds {err}; JSON metrics must be finite numbers"
    except (ValueError, RecursionError) as err:
        return {}, f"{name} is not valid JSON: {err}"
    if not isinstance(value, dict):
        return {}, (f"{name} must hold a JSON object such as {{\"accuracy\": 0.93}}, "
                    f"found {type(value).__name__}")
    found = cast("dict[str, Any]", value)  # JSON object keys are always strings
    where = _not_unicode(found, "")
    if where is not None:
        return {}, (f"{name} holds text that is not valid Unicode (a lone surrogate escape "
                    f"such as \\ud800) at {where[:_MAX_WHERE]}; write UTF-8 text")
    return found, None


def _too_deep(text: str) -> bool:
    """Whether arrays and objects nest more than MAX_DEPTH deep, in linear time.

    Escapes go first, so that what is left of each string is a plain ``"..."`` and strings can
    be dropped without a pattern that backtracks; the brackets left are counted.
    """
    plain = _STRING.sub("", _ESCAPE.sub("", text))
    steps = map(_STEP.__getitem__, _BRACKETS.findall(plain))
    return max(accumulate(steps), default=0) > MAX_DEPTH


def _refuse_constant(constant: str) -> Any:
    raise _Refused(constant)


def _finite(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise _Refused(f"{literal[:40]}, too large for a float")
    return number


def _not_unicode(value: object, where: str) -> str | None:
    """The key path of the first string (key or value) that cannot be encoded, if any."""
    if isinstance(value, str):
        return where if not _encodable(value) else None
    if isinstance(value, list):
        items = cast("list[object]", value)
        for index, item in enumerate(items):
            found = _not_unicode(item, f"{where}[{index}]")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in cast("dict[str, object]", value).items():
            if not _encodable(key):
                return where or "the top level"
            found = _not_unicode(item, f"{where}.{key}" if where else key)
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
