"""Events said in words: ``job succeeded in 4.2 s``, ``review by ops: rejected``.

What ``assay watch`` prints for each event and what the report's event tree shows, so both say
an event the same way. Payloads come from agents and jobs: every value is cut to one printable
line (:func:`activities.events.format.short`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from activities.events.format import short
from workflows.contracts.words import plural, singular_counts

if TYPE_CHECKING:
    from workflows.contracts.execution import EventRecord

TEXT_CHARS = 160
"""The most of one payload value a line shows."""


def _text(payload: Mapping[str, Any], *keys: str) -> str:
    """The first of ``keys`` with a value in ``payload``, on one printable line."""
    for key in keys:
        value = payload.get(key)
        if value not in (None, "", [], {}):
            return short(value if isinstance(value, str) else json.dumps(value, default=str),
                         TEXT_CHARS)
    return ""


def _with(text: str, detail: str) -> str:
    return f"{text}: {detail}" if detail else text


def _count(value: Any, word: str) -> str:
    """``1 task``, ``3 tasks``; ``? tasks`` when the event holds no count."""
    return plural(value, word) if isinstance(value, int) and not isinstance(value, bool) \
        else f"? {word}s"


def refused_text(who: str, reason: str) -> str:
    """A refused gate decision, the same from its event and from the run's query."""
    return _with(f"a decision by {who} was refused", reason)


def _checkpoint(ev: EventRecord) -> str:
    out, inp = ev.outputs, ev.inputs
    phrases = {
        "planned": lambda: f"planned {_count(out.get('tasks'), 'task')}",
        "awaiting_plan": lambda: _with("waits for a plan (assay plan RUN PLAN.json)",
                                       _text(out, "reason")),
        "no_plan": lambda: _with("the planner made no plan", _text(out, "reason")),
        "plan_supplied": lambda: (f"plan {_text(inp, 'plan')} ({_count(inp.get('tasks'), 'task')}) "
                                  f"supplied by {short(ev.agent_name.removeprefix('person:'))}"),
        "plan_from_skill": lambda: "a skill from the library supplied the plan",
    }
    if ev.event_subtype == "start":
        return _with("started", _text(inp, "goal", "plan"))
    if ev.event_subtype == "complete":
        return _with(f"ended {short(ev.status, 20)}", _text(out, "reason", "status_reason"))
    if ev.status in phrases:
        return phrases[ev.status]()
    return f"phase {short(ev.status, 40)}"


def _approval(ev: EventRecord) -> str:
    out, inp = ev.outputs, ev.inputs
    gate = short(str(inp.get("gate", "")), 20) or "a"
    who = short(ev.agent_name, 60)
    if ev.event_subtype == "pending":
        listed = inp.get("approvers")
        approvers = [str(a) for a in cast("list[Any]", listed)] if isinstance(listed, list) else []
        by = ", ".join(short(a, 60) for a in approvers[:10]) or "anyone"
        return f"the {gate} gate waits for a decision by {by}"
    if ev.status == "refused":
        return refused_text(who, _text(out, "reason"))
    if ev.status == "timed_out":
        return f"the {gate} gate timed out ({_text(out, 'action')})"
    via = f" via {short(str(inp['channel']), 20)}" if inp.get("channel") else ""
    return _with(f"the {gate} gate was {short(ev.status, 20)} by {who}{via}",
                 _text(out, "comment"))


def _job(ev: EventRecord) -> str:
    if ev.event_subtype == "start":
        return f"job {_text(ev.inputs, 'filename')} started"
    took = f" in {ev.duration_ms / 1000:.1f} s" if ev.duration_ms is not None else ""
    return _with(f"job {short(ev.status, 30)}{took}", _text(ev.outputs, "reason"))


def _handoff(ev: EventRecord) -> str:
    task = _text(ev.inputs, "task_id")
    if ev.event_subtype == "start":
        return f"task {task} started"
    return _with(f"task {task} {short(ev.status, 20)}", _text(ev.outputs, "reason"))


def _file(ev: EventRecord) -> str:
    out = ev.outputs
    if ev.agent_name == "sandbox":
        size = out.get("size")
        bytes_ = f" ({size:,} bytes)" if isinstance(size, int) else ""
        return f"artifact {_text(out, 'name')}{bytes_}"
    if ev.agent_name == "coder":
        return f"job {_text(out, 'filename')} written ({short(ev.status, 40)})"
    return _with("report written", _text(out, "summary_md"))


def describe(ev: EventRecord) -> str:
    """An event in words: what happened, who did it and why.

    Counts of one in text the workflow wrote (``1 tasks``) read singular.
    """
    return singular_counts(_describe(ev))


def _describe(ev: EventRecord) -> str:
    by_type: dict[str, Callable[[EventRecord], str]] = {
        "checkpoint": _checkpoint, "approval": _approval, "code_exec": _job,
        "handoff": _handoff, "file_gen": _file}
    if ev.event_type in by_type:
        return by_type[ev.event_type](ev)
    detail = _text(ev.outputs, "summary", "reason", "message", "error", "decision", "path")
    who, status = short(ev.agent_name, 40), short(ev.status, 40)
    if ev.status == "environment_ready":
        how = "reused" if ev.outputs.get("reused") else "installed"
        return f"environment {_text(ev.outputs, 'environment')} ready ({how})"
    if ev.status == "environment_refused":
        return _with("environment refused", detail)
    if ev.event_type == "tool_call" and ev.agent_name == "verifier":
        return _with(f"evidence check: {status}", detail)
    if ev.status in ("APPROVE", "REJECT"):
        return _with(f"review by {who}: {'approved' if ev.status == 'APPROVE' else 'rejected'}",
                     detail)
    prefix = "error: " if ev.event_type == "error" else ""
    return _with(f"{prefix}{who} {status}".strip(), detail)


def where(node_id: str) -> str:
    """``run``, or ``task ID``."""
    return "run" if node_id == "run" else f"task {short(node_id, 40)}"
