"""Contracts of the reflector role: a failure the rule table cannot name, and a patch for it.

The reflector sees the failure reflection diagnosed as ``unknown`` (the task, the job's
settings, how it failed, the rule table's note) and proposes a job-spec patch: new values
for arguments and resources only. Code stays the debuggers'. Its answer comes back as a
:class:`~workflows.contracts.reflection.ReflectionNote` scored and guarded exactly as the rule
table's notes are; a patch the guardrails refuse is in the note as refused, never applied.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.reflection import DiagnoseInput, ReflectionNote
from workflows.contracts.roles import AgentRequest, RoleAnswer

MAX_PROPOSED_CHANGES = 5


class ProposedChange(Model):
    """One field the reflector would change, and the value it would set."""

    field: str = Field(min_length=1, max_length=100)
    """``args.<name>`` or ``resources.memory_mb`` / ``resources.timeout_s`` /
    ``resources.cpus``."""
    value: float | int | str | bool
    reason: str = Field(default="", max_length=1000)


class ReflectorOutput(Model):
    """The reflector's answer: what went wrong and the job-spec patch that would cure it."""

    root_cause: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")
    """A short snake_case name; one of the known root causes if one fits."""
    likely_fix: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    """What the failure says and why the changes cure it, in a few sentences."""
    changes: list[ProposedChange] = Field(default_factory=list[ProposedChange],
                                          max_length=MAX_PROPOSED_CHANGES)
    """Empty when no argument or resource change can cure it (code must change)."""


class ReflectRequest(AgentRequest):
    """Input of ``reflect_failure``: the failure and the rule table's note on it."""

    failure: DiagnoseInput
    note: ReflectionNote


class ReflectAnswer(RoleAnswer):
    """Result of ``reflect_failure``: the reflector's note, scored and guarded."""

    note: ReflectionNote
