"""The run's figures: a timeline of its tasks' phases (PNG) and its DAG (Mermaid).

The timeline is drawn with matplotlib's Agg canvas (no display, no global pyplot state): one
row per task, a bar per phase coloured by phase, the task's status beside its name; a task
that never ran (blocked, or the run stopped first) keeps its row, empty, with its status. The DAG
is a Mermaid ``flowchart`` the Markdown carries as text, each node coloured by its status.
"""

# matplotlib types its drawing calls' **kwargs as unknown, so every call would need an ignore:
# pyright: reportUnknownMemberType=false

from __future__ import annotations

from datetime import datetime
from pathlib import Path

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
_OTHER = "#757575"


def phase_spans(task: TaskResult) -> list[tuple[str, datetime, datetime]]:
    """Each phase of a task with when it started and ended (intake from the task's start)."""
    if task.started_at is None or task.finished_at is None:
        return []
    marks = [(m.phase, m.at) for m in task.phases if m.phase != "done"]
    starts = [("intake", task.started_at), *marks]
    ends = [at for _, at in marks] + [task.finished_at]
    return [(phase, start, max(end, start)) for (phase, start), end in zip(starts, ends,
                                                                          strict=True)]


def draw_timeline(report: RunReport, folder: Path) -> str | None:
    """Draw the tasks' timeline under ``folder``: every task, one that never ran as an empty row.

    Returns:
        The figure's path relative to ``folder``, or None when the run has no tasks.
    """
    rows = [(t, phase_spans(t)) for t in report.tasks]
    if not rows:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    timed = [spans for _, spans in rows if spans]
    origin = min((spans[0][1] for spans in timed), default=None)
    height = 1.8 + 0.45 * len(rows)
    figure = Figure(figsize=(10, height), dpi=100)  # fixed margins: a layout engine costs
    # more than the drawing itself (about 20 ms of a one-task run's report)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    used: dict[str, str] = {}
    for row, (task, spans) in enumerate(reversed(rows)):
        colour = STATUS_COLOURS.get(task.status, _OTHER)
        if not spans or origin is None:
            axes.text(0, row, f"  {task.status} (never ran)", va="center", fontsize=9,
                      color=colour, fontweight="bold")
            continue
        bars = [((s - origin).total_seconds(), max((e - s).total_seconds(), 0.001))
                for _, s, e in spans]
        colours = [PHASE_COLOURS.get(phase, _OTHER) for phase, _, _ in spans]
        axes.broken_barh(bars, (row - 0.35, 0.7), facecolors=colours, edgecolor="white",
                         linewidth=0.5)
        used.update({phase: PHASE_COLOURS.get(phase, _OTHER) for phase, _, _ in spans})
        end = bars[-1][0] + bars[-1][1]
        axes.text(end, row, f"  {task.status}", va="center", fontsize=9, color=colour,
                  fontweight="bold")
    axes.set_yticks(range(len(rows)), [t.task_id for t, _ in reversed(rows)])
    axes.set_ylim(-0.7, len(rows) - 0.3)
    axes.set_xlabel("seconds since the first task started")
    axes.set_title(f"Tasks of {report.plan_name} over time, by phase"
                   + ("" if timed else " (no task ran)"))
    axes.grid(axis="x", alpha=0.3)
    last = max(((spans[-1][2] - origin).total_seconds() for spans in timed
                if origin is not None), default=1.0)
    axes.set_xlim(0, max(last, 0.001) * 1.15)
    legend = [Patch(color=c, label=p) for p, c in PHASE_COLOURS.items() if p in used]
    legend += [Patch(color=c, label=p) for p, c in used.items() if p not in PHASE_COLOURS]
    labels = max((len(t.task_id) for t, _ in rows), default=1)
    figure.subplots_adjust(left=min(0.4, (0.25 + 0.075 * labels) / 10), right=0.97,
                           top=1 - 0.45 / height, bottom=1.05 / height)
    if legend:
        figure.legend(handles=legend, loc="lower center", ncol=min(len(legend), 8),
                      fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.0))
    target = folder / FIGURES_FOLDER / TIMELINE
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="png")
    return target.relative_to(folder).as_posix()


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
        colour = STATUS_COLOURS.get(status, _OTHER)
        lines.append(f"  classDef {status} fill:{colour}22,stroke:{colour},color:#000")
    return [*lines, "```"]
