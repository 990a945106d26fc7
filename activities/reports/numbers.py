"""How the report (and the CLI) prints numbers: four significant digits, integers as they are.

A metric such as ``p_value = 0.0001999600079984003`` reads as ``0.0002``; a tiny or huge one
in scientific notation (``1.235e-07``); an integer, a flag or a string unchanged. Lists and
mappings of numbers (a job's ``means``) are printed with each number formatted the same way.
Spans of time and byte counts (binary units: KiB, MiB...) are printed here too, so the
report, the CLI and the reviewers' messages say them alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from workflows.contracts.estimates import estimate_of, is_estimate, shown

SIGNIFICANT = 4
"""Significant digits of a printed float."""


def number(value: float | int) -> str:
    """A number as the report prints it (``0.0002``, ``1.235e+06``, ``24``, ``nan``)."""
    if isinstance(value, bool | int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.{SIGNIFICANT}g}"


def value(item: Any) -> str:
    """Any metric value: numbers formatted, strings quoted, lists and mappings item by item.

    An estimate reads ``0.49 [0.421, 0.55] 95 %`` (a malformed one as the job wrote it).
    """
    if isinstance(item, bool):
        return str(item).lower()
    if isinstance(item, int | float):
        return number(item)
    if isinstance(item, str):
        return repr(item)
    if is_estimate(item):
        return shown(item) if estimate_of(item) is not None else repr(item)
    if isinstance(item, Mapping):
        pairs = cast("Mapping[Any, Any]", item).items()
        return "{" + ", ".join(f"{k}: {value(v)}" for k, v in pairs) + "}"
    if isinstance(item, Sequence):
        return "[" + ", ".join(value(v) for v in cast("Sequence[Any]", item)) + "]"
    return repr(item)


def duration(seconds: float, *, whole: bool = False) -> str:
    """A span of time: ``0.42 s``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min``.

    With ``whole``, under a minute is whole seconds (``12 s``), as a live display shows it;
    a negative span (clocks apart) reads ``0 s``.
    """
    seconds = max(seconds, 0.0)
    if whole and seconds < 59.5:
        return f"{int(seconds)} s"
    if seconds < 59.95:
        return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def byte_size(count: float) -> str:
    """A byte count in binary units: ``812 B``, ``4.1 KiB``, ``3.24 MiB``.

    Past the largest unit it reads ``more than 10**N B``.
    """
    value, unit = float(max(count, 0)), BYTE_UNITS[0]
    for unit in BYTE_UNITS:
        if value < 1024 or unit == BYTE_UNITS[-1]:
            break
        value /= 1024
    if value >= 1e6:
        return f"more than 10**{len(str(int(count))) - 1} B"
    return f"{value:.0f} B" if unit == "B" else f"{value:.3g} {unit}"

