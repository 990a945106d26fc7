"""What the benchmark adapters share: JSONL read with line numbers, one file of a kind found.

And the suite written beside the benchmark's files, then read back as ``assay eval`` reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from workers.evaluation.suite import Suite, SuiteError, load_suite

MAX_LINE_CHARS = 1_000_000


class BenchmarkError(ValueError):
    """A benchmark folder that cannot be imported; the message names the file and line."""


def records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-blank line of a JSONL file.

    Raises:
        BenchmarkError: a line that is not one JSON object.
    """
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if len(line) > MAX_LINE_CHARS:
                raise BenchmarkError(f"{path}:{number}: line longer than {MAX_LINE_CHARS:,} "
                                     "characters")
            try:
                value: Any = json.loads(line)
            except json.JSONDecodeError as err:
                raise BenchmarkError(f"{path}:{number}: not JSON ({err.msg} at column "
                                     f"{err.colno}); each line must be one JSON object"
                                     ) from None
            if not isinstance(value, dict):
                raise BenchmarkError(f"{path}:{number}: a JSON object is expected, not "
                                     f"{type(value).__name__}")
            yield number, cast(dict[str, Any], value)


def one(folder: Path, pattern: str, what: str, *, directory: bool = False) -> Path:
    """The single file (or folder) under ``folder`` matching ``pattern``.

    Raises:
        BenchmarkError: none or several match; the message says which were looked for.
    """
    found = sorted(p for p in folder.rglob(pattern) if p.is_dir() == directory)
    if len(found) != 1:
        listed = ", ".join(str(p.relative_to(folder)) for p in found[:5]) or "none"
        raise BenchmarkError(f"{folder}: one {what} ({pattern}) is expected; found {listed}")
    return found[0]


def text(record: dict[str, Any], key: str, where: str) -> str:
    """A record's non-empty text field, or BenchmarkError naming it."""
    value = record.get(key)
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        raise BenchmarkError(f"{where}: field {key!r} is missing or empty")
    return str(value).strip()


def write_suite(suite: dict[str, Any], path: Path) -> Suite:
    """Write the suite and read it back as ``assay eval`` will (every file checked).

    Raises:
        BenchmarkError: the suite it makes does not load (a table missing, a bad field).
    """
    path.write_text(json.dumps(suite, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        return load_suite(path)[0]
    except SuiteError as err:
        path.unlink()
        raise BenchmarkError(str(err)) from None
