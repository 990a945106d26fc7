"""Contracts of the executive pipeline: reviews, reflection notes, patches and human gates.

Shared by TaskWorkflow and the reviewer, reflection and sandbox activities. Pure models and
pure functions only (the confidence thresholds live here so the workflow can apply them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.contracts.alternatives import BranchSpec, FieldPath
from workflows.contracts.base import BY_CHARS as BY_CHARS
from workflows.contracts.base import COMMENT_CHARS as COMMENT_CHARS
from workflows.contracts.base import Channel, Decided, Model, PlainText, StrictModel
from workflows.contracts.execution import ExecutionOutcome, Verification
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.contracts.policy import GateKind, ReviewPolicy

Severity = Literal["info", "warning", "critical"]
Verdict = Literal["APPROVE", "REJECT"]
Reviewer = Literal["ops", "quality_safety", "infrastructure"]


# --- review --------------------------------------------------------------------------------


class Finding(Model):
    """One thing a reviewer noticed, located where possible."""

    code: str
    message: str
    severity: Severity = "warning"
    line: int | None = None


class InputDigest(Model):
    """A job's input file by name, digest and size (never its path), for its data profile."""

    name: str
    sha256: str
    size: int


class ReviewInput(Model):
    """What every reviewer sees: the task and the job proposed for it."""

    task_id: str
    action: str
    acceptance_criteria: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    job: JobSpec
    input_names: list[str] = Field(default_factory=list[str])
    inputs: list[InputDigest] = Field(default_factory=list[InputDigest])
    """The input files by digest, for their profiles (empty in reviews saved before them)."""
    dependency_artifacts: list[str] = Field(default_factory=list[str])
    policy: ReviewPolicy = Field(default_factory=ReviewPolicy)
    diagnostic: bool = False
    """A debugger's diagnostic script: it prints facts and promises no result to verify."""


class ReviewVerdict(Model):
    """A reviewer's structured verdict: never free text alone."""

    reviewer: Reviewer
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    checks: dict[str, bool] = Field(default_factory=dict[str, bool])
    warnings: list[Finding] = Field(default_factory=list[Finding])
    critical: list[Finding] = Field(default_factory=list[Finding])
    reasoning: str = ""
    details: dict[str, Any] = Field(default_factory=dict[str, Any])


def panel_approves(verdicts: list[ReviewVerdict]) -> bool:
    """The approval gate: all three approve and none raised a critical flag (field logic)."""
    reviewers = {v.reviewer for v in verdicts}
    return (reviewers == {"ops", "quality_safety", "infrastructure"}
            and all(v.verdict == "APPROVE" and not v.critical for v in verdicts))


# --- reflection ----------------------------------------------------------------------------

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
    """Seed thresholds: >= 0.85 retry; 0.70-0.84 retry and log; 0.50-0.69 a person; else defer."""
    if confidence >= 0.85:
        return "retry"
    if confidence >= 0.70:
        return "retry_logged"
    if confidence >= 0.50:
        return "human"
    return "defer"


# --- human gates ---------------------------------------------------------------------------

DECISION_MAX_BYTES = 32_000
"""The largest gate decision a workflow reads (compact UTF-8 JSON); a larger one is refused
unread. No valid decision comes near it: with every character escaped (``\\u0001``, six
bytes) a full ``by``, ``task_id`` and ``comment`` make under 26 000 bytes."""
REFUSALS_KEPT = 20
"""Refused decisions a gate keeps, the latest ones (``refused_count`` counts them all)."""
REFUSAL_CHARS = 400
"""The longest refusal (who, then why) a gate keeps."""
REFUSAL_EVENTS = 20
"""Refusals per gate recorded one by one as events; later ones are only counted."""


class GateDecision(StrictModel):
    """The payload of the ``approve`` signal / ``decide`` update.

    ``temporal workflow signal --name approve --input '{"gate": "plan", "decision":
    "approve", "by": "ada"}'`` sends one.
    """

    gate: GateKind
    task_id: str | None = Field(default=None, max_length=64)
    branch: str | None = Field(default=None, max_length=48)
    """The branch whose task's gate this decides (none: the run's main line)."""
    decision: Literal["approve", "reject", "modify", "branch"]
    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    choice: str | None = Field(default=None, min_length=1, max_length=48)
    """At a ``branch`` gate: the line to keep (a branch's name, or ``main``); at a study's
    ``cycle`` gate: the decision instead of the rules' (``iterate``, ``fix``, ``stop`` or
    ``pivot:H``)."""
    set: dict[FieldPath, Scalar] = Field(default_factory=dict[str, Scalar], max_length=50)
    """With ``modify``: the guarded changes to the task's job, applied before it goes on."""
    branches: list[BranchSpec] = Field(default_factory=list[BranchSpec], max_length=20)
    """With ``branch`` at an ``error`` gate: branches from the failing job, instead of a
    retry (the task ends failed and the run starts them)."""
    channel: Channel | None = None
    """How it was sent: ``assay`` fills ``cli``, the Python client ``python``; none means
    ``temporal`` (a raw signal, as above)."""


class GateRecord(Model):
    """A gate as it stands or was settled: for queries, provenance and the ledger.

    ``by`` and ``comment`` come from a valid :class:`GateDecision`, so they are bounded;
    ``refused`` keeps the latest :data:`REFUSALS_KEPT` refusals, each cut to
    :data:`REFUSAL_CHARS` (see ``workflows.common.gates``), and ``refused_count`` counts all.
    """

    gate: GateKind
    task_id: str | None = None
    status: Literal["waiting", "approved", "rejected", "timed_out", "modified",
                    "branched"] = "waiting"
    opened_at: datetime
    decided_at: datetime | None = None
    by: str | None = None
    comment: str = ""
    question: str = ""
    refused: list[str] = Field(default_factory=list[str])
    refused_count: int = 0
    choice: str | None = None
    """The line a ``branch`` gate kept."""
    set: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    """A ``modify`` decision's changes."""
    branches: list[BranchSpec] = Field(default_factory=list[BranchSpec])
    """A ``branch`` decision's branches."""
    channel: Channel | None = None
    """How the decision came (none: a gate settled by its policy, or before channels)."""

    def person(self) -> Decided | None:
        """Who settled the gate, when, what they said and how (None: nobody, or the policy)."""
        if self.by is None or self.status in ("waiting", "timed_out"):
            return None
        return Decided(by=self.by, at=self.decided_at, comment=self.comment,
                       channel=self.channel or "temporal")

    def decided_text(self) -> str:
        """``approved by ada via cli, 2026-11-28 09:30 UTC: "go"``, or how the policy settled it."""
        person = self.person()
        return f"{self.status} by {person.text() if person else self.by or 'nobody yet'}"


def merge_verdicts(deterministic: ReviewVerdict, model: ReviewVerdict) -> ReviewVerdict:
    """One reviewer's verdict with the model's judgement added to the deterministic checks.

    The model can add findings and reject; it can never approve what the deterministic checks
    rejected or flagged critical. Confidence is the lower of the two.
    """
    critical = [*deterministic.critical, *model.critical]
    rejected = deterministic.verdict == "REJECT" or model.verdict == "REJECT" or bool(critical)
    reasoning = deterministic.reasoning
    if model.reasoning:
        reasoning = f"{reasoning} | model: {model.reasoning}" if reasoning else model.reasoning
    return deterministic.model_copy(update={
        "verdict": "REJECT" if rejected else "APPROVE",
        "confidence": min(deterministic.confidence, model.confidence),
        "warnings": [*deterministic.warnings, *model.warnings],
        "critical": critical,
        "reasoning": reasoning,
        "details": {**deterministic.details, "model": {
            "verdict": model.verdict, "confidence": model.confidence,
            **{k: v for k, v in model.details.items() if k != "source"}}},
    })
