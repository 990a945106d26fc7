"""One column's running facts and the profile's text, the same for every file format.

A :class:`Column` sees values one at a time and keeps only counts, the least and greatest
number, and at most :data:`DISTINCT_KEPT` distinct texts, so its memory does not grow with
the file. :func:`profile_text` renders a profile and bounds it to a number of bytes, saying
what it cut.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "nil", "-", "?"})
"""Values (case-insensitive, stripped) that count as missing."""
DISTINCT_KEPT = 256
"""Distinct texts a column counts; later new ones are only noted."""
TOP_VALUES = 3
VALUE_CHARS = 40
SAMPLE_ROWS = 3
SAMPLE_CELL_CHARS = 40
COLUMNS_SHOWN = 60
PROFILE_BYTES = 6000
"""The default bound of a profile's text, in UTF-8 bytes (``ASSAY_PROFILE_BYTES``)."""


def number_text(value: float) -> str:
    """A number as the profile shows it: integers whole, others to 6 significant digits."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".6g")


def cell_text(value: str, limit: int = VALUE_CHARS) -> str:
    """A value on one line, cut to ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


@dataclass
class Column:
    """The facts gathered about one column so far."""

    name: str
    missing: int = 0
    integers: int = 0
    numbers: int = 0
    texts: int = 0
    low: float | None = None
    high: float | None = None
    counts: Counter[str] = field(default_factory=Counter[str])
    overflow: bool = False
    """More distinct texts were seen than were counted."""

    def add(self, raw: str | None) -> None:
        """Count one value of the column (``None``: missing)."""
        value = "" if raw is None else raw.strip()
        if value.lower() in MISSING:
            self.missing += 1
            return
        number = _number(value)
        if number is None:
            self.texts += 1
            self._count(value)
            return
        if float(number).is_integer() and "." not in value and "e" not in value.lower():
            self.integers += 1
        self.numbers += 1
        self.low = number if self.low is None else min(self.low, number)
        self.high = number if self.high is None else max(self.high, number)
        self._count(value)

    def add_typed(self, value: object) -> None:
        """Count a value a typed reader (Parquet, Excel) gave: numbers stay numbers."""
        if isinstance(value, bool) or value is None:
            self.add(None if value is None else str(value).lower())
        elif isinstance(value, int | float):
            self.add(repr(value) if isinstance(value, float) else str(value))
        else:
            self.add(str(value))

    def _count(self, value: str) -> None:
        if value in self.counts or len(self.counts) < DISTINCT_KEPT:
            self.counts[value] += 1
        else:
            self.overflow = True

    def kind(self) -> str:
        """integer, number, text (with how many values were numbers), or empty."""
        if not self.numbers and not self.texts:
            return "empty"
        if not self.texts:
            return "integer" if self.integers == self.numbers else "number"
        return f"text ({self.numbers} numeric values)" if self.numbers else "text"

    def spread(self) -> str:
        """Least and greatest for numbers; most frequent values and distinct count for text."""
        if not self.texts and self.low is not None and self.high is not None:
            return f"{number_text(self.low)} to {number_text(self.high)}"
        if not self.counts:
            return ""
        top = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_VALUES]
        shown = ", ".join(f'"{cell_text(v)}": {n}' for v, n in top)
        distinct = (f"over {DISTINCT_KEPT} distinct" if self.overflow
                    else f"{len(self.counts)} distinct")
        return f"top {shown} ({distinct})"


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


@dataclass
class Profile:
    """A file's profile before rendering; ``notes`` say what could not be read or was cut."""

    name: str
    size: int
    kind: str
    rows: int | None = None
    rows_exact: bool = True
    columns: list[Column] = field(default_factory=list[Column])
    samples: list[list[str]] = field(default_factory=list[list[str]])
    notes: list[str] = field(default_factory=list[str])


def profile_text(profile: Profile, max_bytes: int = PROFILE_BYTES) -> str:
    """The profile as text of at most ``max_bytes`` UTF-8 bytes, saying if it was cut."""
    lines = [f"{profile.name}: {profile.kind}, {profile.size:,} bytes"]
    if profile.rows is not None:
        rows = f"{profile.rows:,}" if profile.rows_exact else f"about {profile.rows:,}"
        lines.append(f"rows: {rows} (header not counted); columns: {len(profile.columns)}")
    lines += [f"note: {n}" for n in profile.notes]
    if profile.columns:
        lines.append("columns (name | type | missing | range or most frequent values):")
        for col in profile.columns[:COLUMNS_SHOWN]:
            lines.append(f"- {cell_text(col.name)} | {col.kind()} | {col.missing:,} | "
                         f"{col.spread() or '-'}")
        if len(profile.columns) > COLUMNS_SHOWN:
            lines.append(f"- … {len(profile.columns) - COLUMNS_SHOWN} more columns not shown")
    if profile.samples:
        lines.append(f"first {len(profile.samples)} rows:")
        lines += [" | ".join(cell_text(c, SAMPLE_CELL_CHARS) for c in row)
                  for row in profile.samples]
    return bounded(lines, max_bytes)


def bounded(lines: list[str], max_bytes: int) -> str:
    """``lines`` joined, dropping whole lines from the end to fit ``max_bytes``, said so."""
    text = "\n".join(lines)
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    kept = list(lines)
    while kept:
        note = (f"[profile cut: {len(lines) - len(kept)} of {len(lines)} lines left out "
                f"to stay within {max_bytes:,} bytes]")
        candidate = "\n".join([*kept, note])
        if len(candidate.encode("utf-8")) <= max_bytes:
            return candidate
        kept.pop()
    return f"[profile cut: all {len(lines)} lines left out to stay within {max_bytes:,} bytes]"
