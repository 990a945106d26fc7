"""Reading a JSON document a person hands Assay (a plan, a policy) without ever crashing on it.

Whatever the file holds, the reader either returns the parsed value or raises
:class:`JsonFileError` saying what is wrong and where (byte, line and column): it refuses
oversize files before reading them, reads at most the limit, and measures nesting before
parsing, so absurd input (ten thousand nested brackets, gigabytes, invalid UTF-8, a number of
a million digits) ends in a message, never in a RecursionError or MemoryError.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MAX_DEPTH = 64
"""Nesting a person's document may have; plans need under ten levels, and well under this is
what the run's payloads survive (pydantic stops serialising at about 250)."""
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
"""A JSON string (skipped, so brackets inside strings do not count) or a bracket."""


class JsonFileError(ValueError):
    """The file is not a usable JSON document; the message names the file and the place."""


def read_json(path: Path, *, what: str, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """Parse the JSON document at ``path``, refusing what cannot be parsed safely.

    Args:
        path: the file.
        what: what the file is, for messages ("plan", "policy").
        max_bytes: files larger than this are refused before they are read.
        max_depth: arrays and objects nested deeper than this are refused before parsing.

    Raises:
        JsonFileError: missing, unreadable, too large, not UTF-8, nested too deeply or not
            JSON; the message says which, where, and what to do.
    """
    data = _read_bounded(path, what, max_bytes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line, column = _position(data, err.start)
        raise JsonFileError(f"{path}: not UTF-8 text: byte 0x{data[err.start]:02x} at line "
                            f"{line}, column {column} ({err.reason}); save the {what} as "
                            "UTF-8") from None
    _check_depth(path, data, max_depth, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise JsonFileError(f"{path}: invalid JSON at line {err.lineno}, column {err.colno}: "
                            f"{err.msg}") from None
    except (ValueError, RecursionError, MemoryError) as err:
        # ValueError: a number of over 4,300 digits; the others cannot pass the checks
        # above, but a parser failure must never escape as a traceback.
        raise JsonFileError(f"{path}: the {what} cannot be parsed ({type(err).__name__}: "
                            f"{err}); simplify it") from None


def _read_bounded(path: Path, what: str, max_bytes: int) -> bytes:
    """The file's bytes, at most ``max_bytes`` of them (a growing file is refused too)."""
    try:
        if not path.is_file():
            raise JsonFileError(f"{path}: {_not_a_file(path, what)}")
        size = path.stat().st_size
        if size > max_bytes:
            raise JsonFileError(_too_large(path, what, f"{size:,} bytes", max_bytes))
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise JsonFileError(f"{path}: cannot read the {what} ({err.strerror})") from None
    if len(data) > max_bytes:
        raise JsonFileError(_too_large(path, what, "it grew while being read and", max_bytes))
    return data


def _not_a_file(path: Path, what: str) -> str:
    if path.is_dir():
        return f"is a directory, not a {what} file"
    if path.exists():
        return f"not a regular file (a device or a pipe); give the {what} as a file"
    return f"no such {what} file"


def _too_large(path: Path, what: str, size: str, max_bytes: int) -> str:
    return (f"{path}: {size} is over the {max_bytes:,}-byte limit for a {what} file; "
            f"nothing was read. Keep data in separate files rather than inside the {what}")


def _check_depth(path: Path, data: bytes, max_depth: int, what: str) -> None:
    """Refuse nesting deeper than ``max_depth``, naming where it goes too deep."""
    depth = 0
    for token in _TOKEN.finditer(data):
        char = token.group()
        if char in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                line, column = _position(data, token.start())
                raise JsonFileError(f"{path}: nested more than {max_depth} levels deep at "
                                    f"line {line}, column {column}; a {what} nests at most "
                                    f"{max_depth} levels of arrays and objects")
        elif char in (b"]", b"}"):
            depth -= 1


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """Line and column (1-based, in characters as far as they decode) of a byte offset."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column
