"""Where a task's result came from, and when the task entered each phase.

:class:`Provenance` holds the attempts per phase, the patches, the job's author and its
environment; :class:`PhaseMark` is one phase change, for the report's timeline.

Split from ``workflows.contracts.results``, which still exports every name here; results
are JSON, so only the fields matter to histories and reports written before the split.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.executive import GateRecord, PatchChange
from workflows.library.contracts import SkillUse


class PhaseAttempts(Model):
    """Attempts spent in one phase."""

    attempts: int = 0


class ApprovalProvenance(PhaseAttempts):
    """How the task got past its approval gate."""

    approved_after_patch: bool = False
    decided_by: list[str] = Field(default_factory=list[str])


class AppliedPatch(Model):
    """A patch offered by reflection, where it was used and what came of it."""

    patch_id: str
    phase: str
    root_cause: str
    changes: list[PatchChange] = Field(default_factory=list[PatchChange])
    risk: float = 0.0
    confidence: float = 0.0
    sha256: str = ""
    decision: str = ""
    outcome: str = "pending"


class Provenance(Model):
    """Where a task's result came from: its provenance record."""

    approval: ApprovalProvenance = Field(default_factory=ApprovalProvenance)
    execution: PhaseAttempts = Field(default_factory=PhaseAttempts)
    verification: PhaseAttempts = Field(default_factory=PhaseAttempts)
    artifacts: list[str] = Field(default_factory=list[str])
    checksums: dict[str, str] = Field(default_factory=dict[str, str])
    job_source: str = ""
    job_sha256: str = ""
    workflow_id: str = ""
    patches: list[AppliedPatch] = Field(default_factory=list[AppliedPatch])
    reflection_ids: list[str] = Field(default_factory=list[str])
    reflection_misses: int = 0
    approvals: list[GateRecord] = Field(default_factory=list[GateRecord])
    job_author: str = "plan"
    """Who wrote the job that ran: ``plan``, ``coder:fast``, ``coder:deep``,
    ``debugger:<strategy>``, ``template:<id>`` (a procedural template from memory) or
    ``skill:<id>`` (a pattern of the skill library)."""
    memory_rules: list[str] = Field(default_factory=list[str])
    """Semantic rules applied to the job at intake."""
    template_id: str | None = None
    """The procedural template the job came from."""
    skill: SkillUse | None = None
    """The skill the job came from (``job_author`` ``skill:<id>``), with its parameters."""
    guidelines: list[str] = Field(default_factory=list[str])
    """Guideline skills that shaped the task, by id: in the prompt of the planner that planned
    it, or of its coder or debuggers (each counts as one use of the guideline)."""
    environment: PreparedEnvironment | None = None
    """The environment the job last ran in: ``base`` or a provisioned one (name, digest,
    resolved versions)."""


class PhaseMark(Model):
    """When a task entered one of its phases (workflow time): the report's timeline."""

    phase: str
    at: datetime


PHASE_MARKS = 60
"""Phase changes a task's result keeps (the first ones and the last; retries add more)."""
