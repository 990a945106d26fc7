"""Typed contracts exchanged between workflows, activities and clients.

One input and one result model per workflow and activity; new fields always get defaults so
older histories keep deserialising.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.plan import Check, InputFile, JobSpec, Scalar

TaskStatus = Literal[
    "pending",
    "running",
    "completed",
    "failed",
    "failed_retry",
    "failed_final",
    "rejected",
    "blocked",
    "deferred",
    "cancelled",
]
RunStatus = Literal["running", "waiting", "completed", "partial", "failed", "rejected",
                    "deferred", "cancelled"]
"""How a run (or a cycle of a study) stands or ended."""
ExecutionOutcomeKind = Literal[
    "succeeded",
    "timeout",
    "out_of_memory",
    "killed",
    "nonzero_exit",
    "sandbox_violation",
    "missing_dependency",
]


# --- sandbox -------------------------------------------------------------------------------


class Artifact(Model):
    """A file a job left in its working directory."""

    name: str
    size: int
    sha256: str
    path: str = ""


class DependencyArtifact(Model):
    """An artifact of a finished dependency, offered read-only to a dependant job."""

    task_id: str
    name: str
    path: str
    sha256: str


class ExecuteJobInput(Model):
    """Input of the ``execute_job`` activity."""

    run_id: str
    task_id: str
    attempt: int = 1
    job: JobSpec
    inputs: list[InputFile] = Field(default_factory=list[InputFile])
    dependency_artifacts: list[DependencyArtifact] = Field(
        default_factory=list[DependencyArtifact]
    )
    environment: PreparedEnvironment | None = None
    """The provisioned environment the job runs in (none: the worker's own interpreter)."""


class ExecutionOutcome(Model):
    """What happened when a job ran: classified outcome, telemetry and what it left behind."""

    outcome: ExecutionOutcomeKind
    reason: str = ""
    exit_code: int | None = None
    signal: int | None = None
    duration_s: float = 0.0
    cpu_s: float = 0.0
    """CPU time the job's processes used (user + system), when the sandbox could measure it."""
    peak_memory_mb: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    output_truncated: bool = False
    workspace: str = ""
    isolation: str = ""
    artifacts: list[Artifact] = Field(default_factory=list[Artifact])
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    metrics_error: str | None = None
    environment: str = ""
    """Fingerprint of the job interpreter (Python version and a digest of its packages), or
    ``name@digest`` of a provisioned environment: reflection correlates failures with changes
    of it."""


# --- evidence ------------------------------------------------------------------------------


class CheckResult(Model):
    """One evaluated ``checks`` entry."""

    check: Check
    passed: bool
    actual: Scalar | None = None
    reason: str = ""


class VerifyEvidenceInput(Model):
    """Input of the ``verify_evidence`` activity."""

    task_id: str
    job: JobSpec
    checks: list[Check] = Field(default_factory=list[Check])
    outcome: ExecutionOutcome


class Verification(Model):
    """Evidence verdict: passes only if every artifact, metric and check is accounted for."""

    passed: bool
    missing: list[str] = Field(default_factory=list[str])
    checks: list[CheckResult] = Field(default_factory=list[CheckResult])
    artifacts: list[Artifact] = Field(default_factory=list[Artifact])
    summary: str = ""


# --- events --------------------------------------------------------------------------------

EventType = Literal[
    "agent_call", "tool_call", "code_exec", "file_gen", "handoff", "error", "checkpoint",
    "approval",
]
EventSubtype = Literal["start", "complete", "error", "info", "pending"]


class EventRecord(Model):
    """One ExecutionEvent; ``id`` is fixed by the writer so a retried write is a no-op."""

    id: str
    run_id: str
    node_id: str
    event_type: EventType
    execution: str = ""
    """The run's execution that wrote it (Temporal's run id of the run's workflow; a reset
    starts a new one). Empty in events written before executions were recorded."""
    event_subtype: EventSubtype = "info"
    agent_name: str = "assay"
    timestamp: datetime
    duration_ms: int | None = None
    execution_order: int = 0
    depth: int = 0
    status: str = ""
    inputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    outputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    meta: dict[str, Any] = Field(default_factory=dict[str, Any])
    parent_event_id: str | None = None


class EventScope(Model):
    """An event others nest under: its id and its depth in the run's tree of events."""

    id: str
    depth: int = 0


class RecordEventsInput(Model):
    """Input of the ``record_events`` activity: a batch, written in one transaction."""

    events: list[EventRecord]
