"""What the Web UI shows of a task workflow or an activity: a summary line and details.

Temporal keeps the *user metadata* of a start (a child workflow's static summary and details,
an activity's summary) in its history event, and the server refuses a summary whose encoded
payload passes 400 bytes and details past 20 KB. Plans and goals are free text, so every
summary is made here: one line, cut to :data:`SUMMARY_BYTES` of its JSON encoding (escapes
counted), and details to :data:`DETAILS_BYTES`. A workflow that names its steps this way
reads as the plan in the Web UI's timeline ("Task 2 · fit the line" rather than four bars
labelled ``TaskWorkflow``).

Deterministic: imported by workflow code.
"""

from __future__ import annotations

import json

from workflows.contracts.plan import Decision

SUMMARY_BYTES = 300
"""The most bytes a summary's JSON encoding may have (the server's limit is 400)."""
DETAILS_BYTES = 4000
"""The most bytes a workflow's details may have encoded (the server's limit is 20 KB)."""
_MORE = "…"


def summary_line(text: str) -> str:
    """``text`` on one line, without control characters, cut to fit :data:`SUMMARY_BYTES`."""
    return _fit(" ".join(_printable(text).split()), SUMMARY_BYTES)


def details_text(text: str) -> str:
    """``text``, lines kept but no other control characters, cut to fit :data:`DETAILS_BYTES`."""
    return _fit(_printable(text).strip(), DETAILS_BYTES)


def task_summary(decision: Decision) -> str:
    """A task workflow's summary: ``Task 2 · fit the line y ~ x [HIGH]``."""
    action = " ".join(decision.action.split())
    head, tail = f"Task {decision.task_id} · ", f" [{decision.priority}]"
    room = SUMMARY_BYTES - _size(head + tail)
    return summary_line(head + _fit(action, room) + tail)


def task_details(decision: Decision) -> str:
    """A task workflow's details (Markdown): action, dependencies, inputs, job, criteria."""
    job = decision.job
    lines = [f"**Task {decision.task_id}** ({decision.priority})", "", decision.action, "",
             "- Depends on: " + (", ".join(decision.dependencies) or "nothing"),
             "- Inputs: " + (", ".join(decision.inputs) or "none"),
             "- Job: " + (f"{job.filename}" if job is not None and job.filename
                          else "given in the plan" if job is not None else "written by the coder")]
    lines += [f"- Accept when: {' '.join(c.split())}" for c in decision.acceptance_criteria[:10]]
    return details_text("\n".join(lines))


def job_summary(task_id: str, filename: str | None, attempt: int) -> str:
    """An execution's summary: ``Task 2 · run job fit.py (attempt 2)``."""
    return summary_line(f"Task {task_id} · run job {filename or 'job.py'} (attempt {attempt})")


def _printable(text: str) -> str:
    return "".join(c for c in text if c.isprintable() or c in "\n\t ")


def _size(text: str) -> int:
    return len(json.dumps(text))


def _fit(text: str, limit: int) -> str:
    """``text`` whole if its JSON encoding fits ``limit`` bytes, else cut and marked."""
    if _size(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits with the mark
        mid = (lo + hi + 1) // 2
        if _size(text[:mid] + _MORE) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + _MORE
