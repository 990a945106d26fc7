"""What the run's figures share, and its DAG (Mermaid).

The colours of phases and statuses, where figures go, each task's phase spans, and the plan's
DAG as a Mermaid ``flowchart`` the Markdown carries as text, each node coloured by its status.
The timeline PNG is drawn in ``timeline.py``.
"""

from __future__ import annotations

from datetime import datetime

from workflows.contracts.results import RunReport, TaskResult

FIGURES_FOLDER = "figures"
TIMELINE = "timeline.png"

PHASE_COLOURS = {
    "intake": "#b0bec5", "implement": "#64b5f6", "review": "#9575cd",
    "approval_retry": "#ce93d8", "human_gate": "#ffb74d", "execute": "#4db6ac",
    "execution_retry": "#ff8a65", "debug": "#e57373", "verify": "#aed581",
    "verification_retry": "#ffd54f", "finalize": "#90a4ae",
}
"""Colour of each task phase in the timeline."""
STATUS_COLOURS = {"completed": "#2e7d32", "failed": "#c62828", "failed_final": "#c62828",
                  "rejected": "#ad1457", "blocked": "#6d4c41", "cancelled": "#616161",
                  "deferred": "#f9a825"}
"""Colour of each task status (the timeline's labels and the DAG's nodes)."""
OTHER_COLOUR = "#757575"
"""Colour of a phase or status with none of its own."""


def phase_spans(task: TaskResult) -> list[tuple[str, datetime, datetime]]:
    """Each phase of a task with when it started and ended (intake from the task's start)."""
    if task.started_at is None or task.finished_at is None:
        return []
    marks = [(m.phase, m.at) for m in task.phases if m.phase != "done"]
    starts = [("intake", task.started_at), *marks]
    ends = [at for _, at in marks] + [task.finished_at]
    return [(phase, start, max(end, start)) for (phase, start), end in zip(starts, ends,
                                                                          strict=True)]


def mermaid(report: RunReport) -> list[str]:
    """The plan's DAG as a Mermaid flowchart, each task labelled and coloured by status."""
    if not report.tasks:
        return []
    ids = {t.task_id: f"t{n}" for n, t in enumerate(report.tasks)}
    lines = ["```mermaid", "flowchart LR"]
    for task in report.tasks:
        label = f"{task.task_id}<br/>{task.status}".replace('"', "#quot;")
        lines.append(f'  {ids[task.task_id]}["{label}"]:::{task.status}')
    for task in report.tasks:
        lines += [f"  {ids[dep]} --> {ids[task.task_id]}"
                  for dep in report.dependencies.get(task.task_id, []) if dep in ids]
    for status in sorted({t.status for t in report.tasks}):
        colour = STATUS_COLOURS.get(status, OTHER_COLOUR)
        lines.append(f"  classDef {status} fill:{colour}22,stroke:{colour},color:#000")
    return [*lines, "```"]
