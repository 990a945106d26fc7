"""What the Web UI says a workflow is doing now: its current details, and its waits' summaries.

Temporal shows a workflow's *current details* (user metadata, read by the
``__temporal_workflow_metadata`` query) on its page, and a timer's summary on its timeline.
A run, a task and a study keep theirs here: named parts (the phase, the gate that waits and
who may decide it, the latest refused decision), rendered in order whenever one changes.
Setting details is no command, so it never changes a history; a timer's summary is part of
its command, so the gates add one only under their patch (``workflows.common.gates``).

Deterministic: imported by workflow code.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.metadata import details_text, summary_line

_UNITS = (("d", 86_400), ("h", 3_600), ("min", 60))


def span(seconds: float) -> str:
    """A wait's length as people say it: ``7 d``, ``36 h``, ``30 min``, ``45 s``."""
    for unit, size in _UNITS:
        if seconds >= 2 * size or (seconds >= size and seconds % size == 0):
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def who_may(approvers: list[str]) -> str:
    """``ada``, ``ada or bob``, or ``anyone`` (a policy that names nobody)."""
    if not approvers:
        return "anyone"
    shown = approvers[:5]
    more = f" (+{len(approvers) - 5} more)" if len(approvers) > 5 else ""
    return (", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]) + more


def wait_summary(what: str, approvers: list[str], seconds: float) -> str:
    """A gate's timer summary: ``plan gate: waiting for ada, 7 d``."""
    return summary_line(f"{what}: waiting for {who_may(approvers)}, {span(seconds)}")


def outcome_text(status: str, reason: str) -> str:
    """An ended workflow's details: Assay's outcome, which Temporal's own status is not."""
    ended = "" if status == "completed" else (
        " (Temporal shows the workflow *Completed*: it ran to its end; Assay's outcome is "
        "this, also the `AssayStatus` search attribute)")
    return f"**Assay outcome: {status}**{ended}" + (f": {reason}" if reason else "")


class CurrentDetails:
    """A workflow's current details, kept as named parts shown in the order first set."""

    def __init__(self) -> None:
        self.parts: dict[str, str] = {}

    def set(self, part: str, text: str | None) -> None:
        """Set (or, with an empty ``text``, drop) one part and show the details again."""
        if text:
            self.parts[part] = text
        else:
            self.parts.pop(part, None)
        workflow.set_current_details(details_text("\n\n".join(self.parts.values())))
