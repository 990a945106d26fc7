"""What the review panel exchanges: the job it sees, each reviewer's verdict, the gate.

Every reviewer (``activities.review``) takes a :class:`ReviewInput` and returns a structured
:class:`ReviewVerdict`; :func:`panel_approves` is the approval gate and
:func:`merge_verdicts` adds a model's judgement to the deterministic checks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.plan import Check, JobSpec
from workflows.contracts.policy import ReviewPolicy

Severity = Literal["info", "warning", "critical"]
Verdict = Literal["APPROVE", "REJECT"]
Reviewer = Literal["ops", "quality_safety", "infrastructure"]


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
