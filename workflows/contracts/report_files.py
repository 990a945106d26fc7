"""What a run's report folder holds besides its results JSON, Markdown and ledger.

The copies of the verified artifacts, the figures and the events' tree, each relative to the
run's folder; kept apart from :mod:`workflows.contracts.results`, which re-exports them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workflows.contracts.base import Model


class KeptArtifact(Model):
    """A verified artifact copied into the run's report folder (``artifacts/<task>/<name>``)."""

    task_id: str
    name: str
    path: str
    """Where the copy is, relative to the run's folder."""
    size: int
    sha256: str
    kind: Literal["image", "text", "other"] = "other"
    excerpt: str = ""
    """The start of a findings text (``findings.md``, ``summary.txt``...), inlined in the
    Markdown."""
    truncated: bool = False


class ReportFiles(Model):
    """What the report folder holds besides the results JSON, Markdown and ledger."""

    artifacts: list[KeptArtifact] = Field(default_factory=list[KeptArtifact])
    skipped: list[str] = Field(default_factory=list[str])
    """Artifacts not copied, each with why (unsafe path, changed checksum, size budget)."""
    figures: list[str] = Field(default_factory=list[str])
    """Figures drawn for the report (the tasks' timeline), relative to the run's folder."""
    events: str = ""
    """The run's events as a tree (``timeline.md``), relative to the run's folder."""
