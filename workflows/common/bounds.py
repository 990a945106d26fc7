"""Bounds on what callers send a workflow: nothing a signal or update carries is kept whole.

Anyone who can reach the server can signal or update a workflow (the CLI, ``temporal workflow
signal``, a script), with any payload up to the server's 2 MB limit. Whatever a workflow keeps
of it lives on in its state, its query answers, its events and the inputs of its next
activities, each under the same 2 MB limit: one oversize field kept whole makes every later
workflow task fail with ``PAYLOADS_TOO_LARGE`` and wedges the run.

So the handlers take their argument raw (``RawValue``): its encoded size is checked before it
is decoded (:func:`read_json`), a payload the data converter cannot read is refused by the
handler rather than dropped by the SDK, and what is kept of it (who, why, the payload itself)
is cut to a stated length (:func:`~workflows.contracts.plaintext.clip`, :func:`bounded`).
"""

from __future__ import annotations

import json
from typing import Any, cast

from temporalio import workflow
from temporalio.common import RawValue

from workflows.contracts.plaintext import clip


class PayloadRefused(ValueError):
    """A raw signal or update argument refused before or while it was decoded."""


def read_json(raw: RawValue, *, limit: int, what: str, hint: str = "") -> Any:
    """The value of a raw signal or update argument, its encoded size checked first.

    Args:
        raw: the argument as it arrived.
        limit: the most bytes it may have encoded; a larger one is not decoded at all.
        what: what the argument is, for the refusal (``decision``, ``outcome``).
        hint: what keeps one under the limit, added to the refusal (`` (`by` up to 128)``).

    Raises:
        PayloadRefused: it is over ``limit``, or the data converter cannot decode it (not
            JSON, or nested deeper than the converter reads).
    """
    size = len(raw.payload.data)
    if size > limit:
        raise PayloadRefused(f"the {what} is {size:,} bytes, over the {limit:,}-byte limit"
                             f"{hint}; it was not read")
    try:
        return workflow.payload_converter().from_payload(raw.payload)
    except Exception as err:  # whatever the converter raises, the sender's payload is at fault
        raise PayloadRefused(f"the {what} cannot be decoded as JSON: "
                             f"{clip(' '.join(str(err).split()), 200)}") from None


def bounded(payload: Any, limit: int) -> Any:
    """``payload`` as an event may keep it.

    Itself if its JSON has at most ``limit`` characters, else that JSON cut to ``limit``.
    """
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return "<not JSON, or nested too deeply to show>"
    return payload if len(text) <= limit else clip(text, limit)


def claimed_author(payload: Any, limit: int) -> str:
    """Who a raw decision says it is from (its ``by``), cut to ``limit``; else ``unknown``."""
    fields = cast("dict[str, Any]", payload) if isinstance(payload, dict) else {}
    by = fields.get("by")
    return clip(by, limit) if isinstance(by, str) and by.strip() else "unknown"
