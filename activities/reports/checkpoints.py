"""A run's named checkpoints as people read them: one row each, plain or in the report.

:func:`rows` are what ``assay checkpoints RUN`` prints and :func:`markdown_section` the
report's "Checkpoints" section; both say how many automatic ones were dropped.
"""

from __future__ import annotations

from activities.reports.branches import md, text
from workflows.contracts.checkpoints import AUTO_KEPT, Checkpoint, CheckpointList
from workflows.contracts.results import RunReport
from workflows.contracts.words import plural

HEADERS = ["NAME", "KIND", "BY", "AT", "FROM", "FINISHED TASKS"]


def row(point: Checkpoint) -> list[str]:
    """One checkpoint as the cells of :data:`HEADERS`, each plain and bounded."""
    start = f"{point.from_task}:{point.from_phase}" if point.from_task else "-"
    done = ", ".join(f"{t} {s}" for t, s in list(point.tasks.items())[:10])
    more = max(point.finished, len(point.tasks)) - 10
    return [text(point.name), point.kind, text(point.by), f"{point.at:%Y-%m-%d %H:%M:%S}",
            text(start), (done or "none") + (f" (+{more} more)" if more > 0 else "")]


def rows(listing: CheckpointList) -> list[list[str]]:
    """Every checkpoint of ``listing``, oldest first."""
    return [row(p) for p in listing.checkpoints]


def dropped_line(listing: CheckpointList) -> str:
    """How many automatic checkpoints were dropped (empty: none)."""
    if not listing.dropped:
        return ""
    return (f"{plural(listing.dropped, 'older automatic checkpoint')} dropped (the latest "
            f"{AUTO_KEPT} are kept)")


def markdown_section(report: RunReport) -> list[str]:
    """The report's "Checkpoints" section (nothing for a run without checkpoints)."""
    listing = report.checkpoints
    if listing is None or not listing.checkpoints:
        return []
    lines = ["", "## Checkpoints", "",
             "Named state points of the run; `assay branch RUN --from-checkpoint NAME` starts "
             "a branch from one.", "", "| " + " | ".join(h.title() for h in HEADERS) + " |",
             "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(md(cell) for cell in cells) + " |" for cells in rows(listing)]
    if dropped := dropped_line(listing):
        lines += ["", md(dropped)]
    return lines
