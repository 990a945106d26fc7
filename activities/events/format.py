"""One readable line per event, for ``assay watch`` and other terminal output.

Event payloads come from agents and sandboxed jobs, so everything printed here is reduced to
printable characters: a job cannot move the cursor or recolour the user's terminal.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from activities.events.schema import StoredEvent

SUMMARY_CHARS = 100
SUMMARY_KEYS = (
    "summary", "message", "error", "reason", "decision", "outcome", "stdout", "path",
    "files_generated", "code",
)
"""Payload keys worth showing, best first; otherwise the outputs' JSON is shown."""


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _summary(outputs: dict[str, Any], inputs: dict[str, Any]) -> str:
    for payload in (outputs, inputs):
        for key in SUMMARY_KEYS:
            value = payload.get(key)
            if value not in (None, "", [], {}):
                text = value if isinstance(value, str) else json.dumps(value, default=str)
                return f"{key}={text.strip()}"
    payload = outputs or inputs
    return json.dumps(payload, default=str, ensure_ascii=False) if payload else ""


def one_line(text: str) -> str:
    """``text`` on one printable line: controls are spaces, runs of space one."""
    return " ".join(_printable(text).split())


def short(text: str, limit: int = SUMMARY_CHARS) -> str:
    """``text`` on one printable line of at most ``limit`` characters."""
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_event(e: StoredEvent) -> str:
    """One line: UTC time, seq, node (indented by depth), type/subtype, status, agent, summary.

    Example: ``2026-01-21T10:30:00.123Z  #15   step_3  code_exec/complete  completed
    engineer 1250ms  stdout=Plot saved to spectrum.png``
    """
    ev = e.event
    stamp = ev.timestamp.astimezone(UTC) if ev.timestamp.tzinfo else ev.timestamp
    when = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    indent = "  " * min(max(ev.depth, 0), 8)
    took = f" {ev.duration_ms}ms" if ev.duration_ms is not None else ""
    parts = [
        when,
        f"#{e.seq:<5}",
        f"{indent}{short(ev.node_id, 40)}",
        f"{ev.event_type}/{ev.event_subtype}",
        short(ev.status, 20) or "-",
        short(ev.agent_name, 30) + took,
    ]
    summary = short(_summary(ev.outputs, ev.inputs))
    if summary:
        parts.append(summary)
    return "  ".join(parts)
