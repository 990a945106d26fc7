"""What an agent is told of finished tasks: a bounded digest of each one's verified results.

A dependent task's coder is given a :class:`TaskDigest` of each task it depends on, and the
output processor one of every task of the run: status and reason, verified metrics, each
check's outcome, the tail of the job's output and the artifacts it left. The workflow builds
the digests from results (``workflows.research.context``); the agent activity adds the first
lines of the text artifacts named in ``files`` when it writes the prompt
(``activities.agents.previews``), so file contents never enter a workflow's history.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.execution import DependencyArtifact

DIGEST_ITEMS = 20
"""Metrics, checks and artifacts a digest keeps per task (the metrics checks and hypotheses
name first); the digest says what it left out."""
DIGEST_VALUE_CHARS = 200
"""A metric value longer than this (as JSON) is kept as its first characters, as text."""


class TaskDigest(Model):
    """One finished task's result as an agent sees it."""

    task_id: str
    action: str
    status: str
    status_reason: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    checks: list[str] = Field(default_factory=list[str])
    """Each evaluated check as text with pass/fail."""
    artifacts: list[str] = Field(default_factory=list[str])
    stdout_tail: str = ""
    files: list[DependencyArtifact] = Field(default_factory=list[DependencyArtifact])
    """Artifacts whose first lines the agent activity shows (text files only)."""
    omitted: list[str] = Field(default_factory=list[str])
    """What the digest left out, one line per list it cut (``workflows.common.cuts``)."""
