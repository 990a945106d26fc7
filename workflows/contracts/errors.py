"""Every error type Assay raises on purpose, and whether a retry could ever help.

Activities and workflows raise ``ApplicationError(..., type=ErrorType.X)``; retry policies
list :data:`PERMANENT` as ``non_retryable_error_types``, so a deterministic failure (a bad
request, an invalid answer, a spent budget) is never retried and never re-spends money, while
a passing one (a server error, an overloaded machine) is. A new error type is added here, once.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorType(StrEnum):
    """The ``type`` of every ``ApplicationError`` Assay raises."""

    # requests that are wrong, whoever sends them again
    INVALID_PLAN = "InvalidPlan"
    INVALID_JOB = "InvalidJob"
    INPUT_CHANGED = "InputChanged"
    EVENT_REJECTED = "EventRejected"
    GATE_REFUSED = "GateRefused"
    """A gate decision the workflow will not take: malformed, oversize, misdirected or from
    someone the policy does not allow; the message says who may decide and how."""
    ENVIRONMENT_REFUSED = "EnvironmentRefused"
    """A job's environment cannot be made: an unknown package or name, conflicting pins, a
    package without a wheel, or one the run's package policy blocks."""
    PLAN_REFUSED = "PlanRefused"
    """A supplied plan the run will not take: it waits for none, or the plan is unusable."""
    BRANCH_REFUSED = "BranchRefused"
    """A branch request the run will not take: who, from where, which names or changes."""
    STEER_REFUSED = "SteerRefused"
    CHECKPOINT_REFUSED = "CheckpointRefused"
    """A checkpoint name the run will not take: taken, malformed, too many, or the run ended."""
    """A pause, resume, cancel or close the run will not take: who, or when."""
    # a worker that cannot do the work at all
    SANDBOX_UNAVAILABLE = "SandboxUnavailable"
    REPORT_UNWRITABLE = "ReportUnwritable"
    MODEL_NOT_CONFIGURED = "ModelNotConfigured"
    # model answers and budgets: a retry would spend again for the same result
    INVALID_MODEL_OUTPUT = "InvalidModelOutput"
    INVALID_OUTPUT_SCHEMA = "InvalidOutputSchema"
    MODEL_REFUSED = "ModelRefused"
    MODEL_REJECTED_REQUEST = "ModelRejectedRequest"
    BUDGET_EXHAUSTED = "BudgetExhausted"
    REPLAY_MISS = "ReplayMiss"
    REPLAY_UNREADABLE = "ReplayUnreadable"
    RECORDING_REFUSED = "RecordingRefused"
    """A run's model recording names a host path, or no name or digest: the agents worker
    opens nothing a run chooses outside its own data directory and the artifact store."""
    # passing conditions: retried with backoff
    DISK_FULL = "DiskFull"
    JOB_INTERPRETER_MISSING = "JobInterpreterMissing"
    PROBE_TIMEOUT = "ProbeTimeout"
    PROBE_FAILED = "ProbeFailed"
    ENVIRONMENT_UNREACHABLE = "EnvironmentUnreachable"
    """The package index or wheelhouse cannot be reached right now."""
    MODEL_UNREACHABLE = "ModelUnreachable"
    MODEL_SERVER_ERROR = "ModelServerError"
    STORE_UNAVAILABLE = "StoreUnavailable"
    """The artifact store cannot be reached, or a transfer broke off midway."""


TRANSIENT: frozenset[ErrorType] = frozenset({
    ErrorType.DISK_FULL, ErrorType.JOB_INTERPRETER_MISSING, ErrorType.PROBE_TIMEOUT,
    ErrorType.PROBE_FAILED, ErrorType.ENVIRONMENT_UNREACHABLE, ErrorType.MODEL_UNREACHABLE,
    ErrorType.MODEL_SERVER_ERROR, ErrorType.STORE_UNAVAILABLE,
})
"""Types whose cause may pass (disk freed, machine less loaded, service back)."""

PERMANENT: tuple[str, ...] = tuple(sorted(t.value for t in ErrorType if t not in TRANSIENT))
"""Every other type: what retry policies list as ``non_retryable_error_types``."""
