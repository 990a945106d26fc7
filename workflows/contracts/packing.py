"""Large lists packed into one compressed string, so a 10 000-task run fits Temporal's payloads.

Temporal refuses a payload over 2 MiB and warns from 512 KiB; a history warns at 10 MB. A
plan of 10 000 tasks is 3 to 20 MB of JSON, most of it the same job repeated with other
arguments, and a batch of 500 tasks' results is 2 to 3 MB of much the same shape. Packed
(JSON, zlib, base64) they are a twentieth of that. Only plans over :data:`PACK_FROM` tasks
are packed where a run's or a branch's input carries them, so the input of a run the size
of those before (at most 1 000 tasks) is byte for byte what it was.

Pure and deterministic: workflow code packs and unpacks.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from pydantic import (
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from workflows.contracts.base import Model

PACK_FROM = 1000
"""Plans of more tasks than this are packed in a run's or a branch's input."""
PACKED_KEY = "packed"
"""The key a packed plan's single field has (``{"packed": "..."}``)."""


def pack(data: Any) -> str:
    """``data`` (JSON-ready) as compressed, base64-encoded JSON."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(zlib.compress(text.encode(), 6)).decode("ascii")


def unpack(text: str) -> Any:
    """The JSON-ready data :func:`pack` packed."""
    return json.loads(zlib.decompress(base64.b64decode(text)))


def pack_plan_field(data: dict[str, Any], field: str = "plan") -> dict[str, Any]:
    """``data`` (a serialised model) with its plan packed if it has over ``PACK_FROM`` tasks."""
    plan = data.get(field)
    if isinstance(plan, dict) and len(plan.get("decisions") or ()) > PACK_FROM:  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        data[field] = {PACKED_KEY: pack(plan)}
    return data


def unpack_plan_field(data: Any, field: str = "plan") -> Any:
    """Raw model input with a packed plan unpacked (what :func:`pack_plan_field` undoes)."""
    if isinstance(data, dict):
        raw: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
        plan = raw.get(field)
        if isinstance(plan, dict) and set(plan) == {PACKED_KEY}:  # pyright: ignore[reportUnknownArgumentType]
            return {**raw, field: unpack(str(plan[PACKED_KEY]))}  # pyright: ignore[reportUnknownArgumentType]
    return data  # pyright: ignore[reportUnknownVariableType]


class PlanPacking(Model):
    """Base of an input that carries a ``plan``: packed on the wire past ``PACK_FROM`` tasks."""

    @model_serializer(mode="wrap")
    def _packed(self, handler: SerializerFunctionWrapHandler,
                info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return pack_plan_field(data) if info.mode == "json" else data

    @model_validator(mode="before")
    @classmethod
    def _unpacked(cls, data: Any) -> Any:
        return unpack_plan_field(data)
