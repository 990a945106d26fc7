"""What reflection exchanges: a failure to diagnose, its note, the patch and the retry decision.

Shared by TaskWorkflow and the reflection and sandbox activities. The confidence thresholds
(:func:`retry_decision`) live here so the workflow can apply them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.execution import ExecutionOutcome, Verification
from workflows.contracts.plan import Check, JobSpec
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.verdicts import ReviewVerdict

FailureKind = Literal["rejected", "execution", "verification"]
RetryDecision = Literal["retry", "retry_logged", "human", "defer"]
PatternKind = Literal["frequency", "divergence", "artifact_consistency",
                      "temporal_correlation"]
PatchSource = Literal["rule_table", "semantic_rule", "episodic", "model", "none"]
"""Where a patch came from: the rule table, a semantic rule, an episode that worked, a model."""


class Pattern(Model):
    """A pattern mined from signals and episodes (R1)."""

    kind: PatternKind
    key: str
    count: int
    tasks: list[str] = Field(default_factory=list[str])
    detail: str = ""


class PatchChange(Model):
    """One changed field of a job spec (``args.batch_size``, ``resources.timeout_s``)."""

    field: str
    old_value: Any = None
    new_value: Any = None
    reason: str = ""


class Patch(Model):
    """A minimal, checksummed diff of a job spec."""

    patch_id: str
    task_id: str
    root_cause: str
    changes: list[PatchChange]
    confidence: float = Field(ge=0, le=1)
    risk: float = Field(ge=0, le=1)
    from_semantic_memory: bool = False
    sha256: str = ""
    safety_checks: dict[str, str] = Field(default_factory=dict[str, str])


class DiagnoseInput(Model):
    """A failure to reflect on, with everything known about it."""

    run_id: str
    task_id: str
    kind: FailureKind
    attempt: int
    job: JobSpec
    verdicts: list[ReviewVerdict] = Field(default_factory=list[ReviewVerdict])
    outcome: ExecutionOutcome | None = None
    verification: Verification | None = None
    previous_patches: list[Patch] = Field(default_factory=list[Patch])
    checks: list[Check] = Field(default_factory=list[Check])
    policy: ReviewPolicy = Field(default_factory=ReviewPolicy)
    action: str = ""
    """The task's action: with the job and inputs, its kind is what memory is keyed by."""
    input_names: list[str] = Field(default_factory=list[str])
    """The task's input files: the data part of its kind."""
    memory: bool = True
    """The run uses memory: reflection may read episodes and rules and write its ledger."""


class ReflectionNote(Model):
    """A diagnosis and, where one is safe, a patch with the decision it warrants."""

    note_id: str
    task_id: str
    kind: FailureKind
    root_cause: str
    likely_fix: str
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(default_factory=list[str])
    patch: Patch | None = None
    patched_job: JobSpec | None = None
    relink: dict[str, str] = Field(default_factory=dict[str, str])
    decision: RetryDecision = "defer"
    reason: str = ""
    source: PatchSource = "rule_table"
    memory_ref: str = ""
    """The rule id or episode id a proven fix came from."""
    patterns: list[Pattern] = Field(default_factory=list[Pattern])


class RescanInput(Model):
    """Input of ``rescan_artifacts``: find evidence the job left in the wrong place."""

    task_id: str
    job: JobSpec
    outcome: ExecutionOutcome
    input_names: list[str] = Field(default_factory=list[str])
    """The task's inputs, copied into the working directory: never evidence."""


class RescanResult(Model):
    """The outcome with re-linked artifacts (and re-read metrics) added.

    ``relinked`` maps an expected name to the path (relative to the working directory) it
    was found at; ``still_missing`` lists expected names not found (``metrics.json`` for
    missing metrics); ``notes`` says why for each (candidates named when ambiguous).
    """

    outcome: ExecutionOutcome
    relinked: dict[str, str] = Field(default_factory=dict[str, str])
    still_missing: list[str] = Field(default_factory=list[str])
    notes: list[str] = Field(default_factory=list[str])


def retry_decision(confidence: float) -> RetryDecision:
    """Thresholds: >= 0.85 retry; 0.70-0.84 retry and log; 0.50-0.69 a person; else defer."""
    if confidence >= 0.85:
        return "retry"
    if confidence >= 0.70:
        return "retry_logged"
    if confidence >= 0.50:
        return "human"
    return "defer"
