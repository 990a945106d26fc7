"""Large lists packed into one compressed string, so a 10 000-task run fits Temporal's payloads.

Temporal refuses a payload over 2 MiB and warns from 512 KiB; a history warns at 10 MB. A
plan of 10 000 tasks is 3 to 20 MB of JSON, most of it the same job repeated with other
arguments, and a batch of 500 tasks' results is 2 to 3 MB of much the same shape. Packed
(JSON, zlib, base64) they are a twentieth of that. Only plans over :data:`PACK_FROM` tasks
are packed where a run's or a branch's input carries them, so the input of a run the size
of those before (at most 1 000 tasks) is byte for byte what it was.

A run's input carries its packed plan in chunks (``packed_plan``) left undecoded when the
input is read: validating 10 000 decisions takes over a second, too long for the one
workflow task that reads the input. The run decodes them a chunk at a time
(``workflows.research.batches.unpack_plan``); a client reading a run's input calls
:meth:`ChunkedPlan.with_plan`.

Pure and deterministic: workflow code packs and unpacks.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any, Self

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from workflows.contracts.base import Model

PACK_FROM = 1000
"""Plans of more tasks than this are packed in a run's or a branch's input."""
PACK_CHUNK = 500
"""Decisions per packed chunk of a run's plan (the run decodes one chunk per workflow task,
some 0.07 s each, so none comes near Temporal's 2-second deadlock detector)."""
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


class ChunkedPlan(Model):
    """Base of a run's input: a plan of over ``PACK_FROM`` tasks goes as packed chunks."""

    packed_plan: list[str] = Field(default_factory=list[str])
    """A plan of over 1 000 tasks as sent (``plan`` is then None): its fields without its
    decisions, then its decisions, :data:`PACK_CHUNK` a chunk, each packed."""

    @model_serializer(mode="wrap")
    def _chunked(self, handler: SerializerFunctionWrapHandler,
                 info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        plan: dict[str, Any] | None = data.get("plan")
        if info.mode == "json" and plan is not None:
            decisions: list[Any] = plan.get("decisions") or []
            if len(decisions) > PACK_FROM:
                head = {k: v for k, v in plan.items() if k != "decisions"}
                data["plan"] = None
                data["packed_plan"] = [pack(head), *(
                    pack(decisions[i:i + PACK_CHUNK])
                    for i in range(0, len(decisions), PACK_CHUNK))]
        if not data.get("packed_plan"):
            data.pop("packed_plan", None)
        return data

    def with_plan(self) -> Self:
        """This input with its packed plan decoded into ``plan`` (a client's read)."""
        if not self.packed_plan:
            return self
        plan = {**unpack(self.packed_plan[0]),
                "decisions": [d for chunk in self.packed_plan[1:] for d in unpack(chunk)]}
        return self.model_validate({**self.model_dump(exclude={"plan", "packed_plan"}),
                                    "plan": plan})
