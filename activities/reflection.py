"""The ``diagnose_failure`` activity: why a task failed, and a safe patch where one exists.

Reflection's first version is a rule table (see :mod:`activities.reflection_execution`,
:mod:`activities.reflection_approval`, :mod:`activities.reflection_evidence`): structured
fields first, text only as evidence. Every patch passes the guardrails of
:mod:`activities.reflection_guard` or is dropped with the reason in the note; the note's
confidence and risk follow the reflection formulas and its decision the thresholds of
:func:`workflows.executive.retry_decision`.

The activity is a pure function of its input (no I/O, no clock), so it is fast, safe to
retry and gives the same note for the same failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from temporalio import activity

from activities.reflection_approval import diagnose_rejection
from activities.reflection_evidence import diagnose_verification
from activities.reflection_execution import diagnose_execution
from activities.reflection_guard import check_patch
from activities.reflection_patch import (
    PatchError,
    apply_patch,
    safety_checks,
    same_changes,
    sealed,
)
from activities.reflection_rules import Diagnosis, confidence_score, risk_score
from workflows.executive import (
    DiagnoseInput,
    FailureKind,
    Patch,
    ReflectionNote,
    RetryDecision,
    retry_decision,
)
from workflows.plan import JobSpec

__all__ = ["diagnose", "diagnose_failure", "note_id_for"]

_RULES: dict[FailureKind, Callable[[DiagnoseInput], Diagnosis]] = {
    "rejected": diagnose_rejection,
    "execution": diagnose_execution,
    "verification": diagnose_verification,
}
_DECISION_WORDS: dict[RetryDecision, str] = {
    "retry": "retrying automatically",
    "retry_logged": "retrying automatically, logged for review",
    "human": "a person must approve the retry",
    "defer": "deferred to the next planning cycle",
}


def note_id_for(req: DiagnoseInput) -> str:
    """Deterministic note id: the same failure always gets the same id."""
    key = f"{req.run_id}/{req.task_id}/{req.kind}/{req.attempt}"
    return "ref-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


@activity.defn(name="diagnose_failure")
async def diagnose_failure(req: DiagnoseInput) -> ReflectionNote:
    """Diagnose one failed approval, execution or verification (reflection pool)."""
    return diagnose(req)


def diagnose(req: DiagnoseInput) -> ReflectionNote:
    """The reflection note for a failure: diagnosis, guarded patch, confidence and decision."""
    found = _RULES[req.kind](req)
    patched, refused = _guarded(req, found)
    actions = len(found.changes) if patched is not None else len(found.relink) or None
    if found.fixed_confidence is not None:
        confidence = found.fixed_confidence
    else:
        divergence = len({v.verdict for v in req.verdicts}) > 1
        confidence = confidence_score(known_pattern=found.known, proven_fix=False,
                                      actions=actions, divergence=divergence,
                                      attempt=req.attempt)
    decision = retry_decision(confidence) if actions else "defer"
    note_id = note_id_for(req)
    patch = None if patched is None else _patch(req, found, note_id, patched, confidence)
    reason = found.reason + (f"; patch dropped: {'; '.join(refused)}" if refused else "")
    evidence = [*found.evidence, *(f"guardrail: {v}" for v in refused)]
    return ReflectionNote(
        note_id=note_id, task_id=req.task_id, kind=req.kind, root_cause=found.root_cause,
        likely_fix=found.likely_fix, confidence=confidence, evidence=evidence, patch=patch,
        patched_job=patched, relink=found.relink, decision=decision,
        reason=f"{reason} (confidence {confidence:.2f}: {_DECISION_WORDS[decision]})")


def _guarded(req: DiagnoseInput, found: Diagnosis) -> tuple[JobSpec | None, list[str]]:
    """The patched job if the rule's patch passes every guardrail, else what it broke."""
    if not found.changes:
        return None, []
    try:
        patched = apply_patch(req.job, found.changes)
    except PatchError as err:
        return None, [str(err)]
    violations = check_patch(req.job, patched, req.policy)
    violations.extend(f"the same patch was already tried ({p.patch_id})"
                      for p in req.previous_patches if same_changes(p.changes, found.changes))
    return (None, violations) if violations else (patched, [])


def _patch(req: DiagnoseInput, found: Diagnosis, note_id: str, patched: JobSpec,
           confidence: float) -> Patch:
    return sealed(Patch(
        patch_id="patch-" + note_id.removeprefix("ref-"), task_id=req.task_id,
        root_cause=found.root_cause, changes=found.changes, confidence=confidence,
        risk=risk_score(changes=len(found.changes), from_memory=False, confidence=confidence),
        from_semantic_memory=False, safety_checks=safety_checks(req.job, patched)))
