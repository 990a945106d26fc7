"""Making any ``EventRecord`` storable, so one bad event never fails (or wedges) a batch.

PostgreSQL refuses some values a Python dict happily holds: NUL characters in text or JSONB,
``NaN``/``Infinity`` in JSONB, and index entries over ~2.7 KB. A refused row would fail the whole
batch on every retry, so such values are repaired here instead: NULs become U+FFFD, non-finite
floats and non-JSON values become strings, over-long strings are cut with a visible marker, and
over-long keys (ids, run and node ids) are replaced by a stable digest so idempotency and the
parent/child links still hold. Every JSON field that had to be cut is listed in
``meta["_truncated"]``.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC
from typing import Any, NamedTuple

from workflows.contracts.execution import EventRecord

MAX_JSON_BYTES = 256 * 1024
"""Largest serialised ``inputs``/``outputs``/``meta`` kept as is."""

MAX_STRING_CHARS = 16 * 1024
"""Strings inside an oversize JSON field are cut to this length."""

MAX_TEXT_CHARS = 4096
"""Longest plain text column (status, agent name, event subtype)."""

MAX_KEY_BYTES = 512
"""Longest indexed key (id, run id, node id, parent id) before it is replaced by its digest."""

TRUNCATION_MARKER = "…[truncated {n} chars]"
JSON_FIELDS = ("inputs", "outputs", "meta")
TEXT_FIELDS = ("event_subtype", "agent_name", "status")
KEY_FIELDS = ("id", "run_id", "execution", "node_id", "parent_event_id")
INT_RANGES = {
    "duration_ms": (-(2**63), 2**63 - 1),
    "execution_order": (-(2**63), 2**63 - 1),
    "depth": (-(2**31), 2**31 - 1),
}
"""Column ranges (bigint, bigint, integer); pydantic ints are unbounded, so values are clamped."""


def dumps(value: Any) -> str:
    """Serialise JSON the way the database will receive it (strict: no NaN, no stray types)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)


def fit_key(key: str) -> str:
    """``key`` itself, or a stable digest of it when it is too long to index."""
    clean = key.replace("\x00", "\ufffd")
    if len(clean.encode()) <= MAX_KEY_BYTES:
        return clean
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _cut(text: str, limit: int, cuts: list[int] | None = None) -> str:
    """``text`` without NULs, cut to ``limit`` characters with a marker (counted in ``cuts``)."""
    clean = text.replace("\x00", "\ufffd")
    if len(clean) <= limit:
        return clean
    if cuts is not None:
        cuts.append(len(clean) - limit)
    return clean[:limit] + TRUNCATION_MARKER.format(n=len(clean) - limit)


def _clean(value: Any, limit: int, cuts: list[int]) -> Any:
    """A JSON-safe copy of ``value`` with every string cut to ``limit`` characters."""
    if isinstance(value, str):
        return _cut(value, limit, cuts)
    if isinstance(value, bool | int) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {_cut(str(k), limit, cuts): _clean(v, limit, cuts) for k, v in items.items()}
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [_clean(v, limit, cuts) for v in seq]
    return _cut(str(value), limit, cuts)


class JsonText(str):
    """JSON already serialised by :func:`fit_json`; :func:`serialize` passes it through as is."""

    __slots__ = ()


def serialize(value: Any) -> str:
    """The engine's JSON serialiser: each JSON field is encoded once, not twice."""
    return value if isinstance(value, JsonText) else dumps(value)


class Fitted(NamedTuple):
    """A storable JSON field: the value, its JSON text, and whether anything was cut."""

    value: dict[str, Any]
    text: JsonText
    cut: bool


def fit_json(value: dict[str, Any]) -> Fitted:
    """A storable version of one JSON field.

    The common case (small, clean) costs one ``json.dumps``. Otherwise NULs and non-finite
    numbers are repaired, long strings are cut, and if the field is still too big it is
    replaced by ``{"_truncated": true, "original_chars": N, "preview": "<head of the JSON>"}``.
    """
    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = None  # NaN or an unserialisable value: repair below
    if text is not None and len(text) <= MAX_JSON_BYTES and "\\u0000" not in text:
        return Fitted(value, JsonText(text), False)
    original_chars = len(text) if text is not None else None
    cuts: list[int] = []
    cleaned: dict[str, Any] = _clean(value, MAX_STRING_CHARS, cuts)
    text = dumps(cleaned)
    if len(text) <= MAX_JSON_BYTES:
        return Fitted(cleaned, JsonText(text), bool(cuts))
    preview = _cut(text, MAX_STRING_CHARS)
    stub = {"_truncated": True, "original_chars": original_chars or len(text), "preview": preview}
    return Fitted(stub, JsonText(dumps(stub)), True)


def event_row(event: EventRecord) -> dict[str, Any]:
    """The column values of one event, repaired so PostgreSQL accepts them (see module doc).

    JSON columns hold :class:`JsonText`, so the engine must use :func:`serialize`.
    """
    row = event.model_dump()
    for name in KEY_FIELDS:
        if row[name] is not None:
            row[name] = fit_key(row[name])
    for name in TEXT_FIELDS:
        row[name] = _cut(row[name], MAX_TEXT_CHARS)
    for name, (low, high) in INT_RANGES.items():
        if row[name] is not None:
            row[name] = min(max(row[name], low), high)
    fitted = {name: fit_json(row[name]) for name in JSON_FIELDS}
    for name, field in fitted.items():
        row[name] = field.text
    cut = [name for name, field in fitted.items() if field.cut]
    if cut:
        row["meta"] = JsonText(dumps({**fitted["meta"].value, "_truncated": cut}))
    if row["timestamp"].tzinfo is None:  # a naive time is taken as UTC, never as local time
        row["timestamp"] = row["timestamp"].replace(tzinfo=UTC)
    return row
