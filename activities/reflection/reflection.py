"""The ``diagnose_failure`` activity: why a task failed, and a safe patch where one exists.

Reflection's first version is a rule table (see :mod:`activities.reflection.execution`,
:mod:`activities.reflection.approval`, :mod:`activities.reflection.evidence`): structured
fields first, text only as evidence. Every patch passes the guardrails of
:mod:`workflows.common.guard` or is dropped with the reason in the note; the note's
confidence and risk follow the reflection formulas and its decision the thresholds of
:func:`workflows.contracts.reflection.retry_decision`, made more cautious by the patch's risk
(:func:`activities.reflection.rules.gated_decision`).

With memory (:class:`Reflection`, the reflection pool's activity) the rule table is only the
first opinion: the run's signals are read from the event store and mined for patterns
(:mod:`activities.reflection.mining`), and a fix memory has seen work for the same task type
and root cause - an active semantic rule, else an episode - is preferred to the rule table's
template (it scores as a proven fix: +0.20 confidence, -0.20 risk). Every note and patch is
appended to the memory ledger. Memory is consulted within a tight budget; when it is slow or
down the note is the rule table's, with the miss in its evidence.

:func:`diagnose` itself is a pure function of its input and what memory said (no I/O, no
clock), so it gives the same note for the same failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from activities.memory.rules import proven_fix
from activities.memory.store import LedgerEntry, MemoryStore
from activities.patches.apply import (
    PatchError,
    apply_patch,
    safety_checks,
    same_changes,
    sealed,
)
from activities.reflection.approval import diagnose_rejection
from activities.reflection.evidence import diagnose_verification
from activities.reflection.execution import diagnose_execution
from activities.reflection.mining import mine, read_signals
from activities.reflection.rules import (
    Diagnosis,
    confidence_score,
    gated_decision,
    risk_ceiling,
    risk_score,
)
from workflows.catalogue import DIAGNOSE_FAILURE
from workflows.common.guard import check_patch
from workflows.constants import in_study
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import Episode
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import (
    DiagnoseInput,
    FailureKind,
    Patch,
    PatchChange,
    PatchSource,
    Pattern,
    ReflectionNote,
    RetryDecision,
)

__all__ = ["MemoryView", "Reflection", "diagnose", "diagnosis_of", "note_id_for", "scored"]

log = logging.getLogger("assay.reflection")

_RULES: dict[FailureKind, Callable[[DiagnoseInput], Diagnosis]] = {
    "rejected": diagnose_rejection,
    "execution": diagnose_execution,
    "verification": diagnose_verification,
}
_DECISION_WORDS: dict[RetryDecision, str] = {
    "retry": "retrying automatically",
    "retry_logged": "retrying automatically, logged for review",
    "human": "a person must approve the retry",
    "defer": "not retried automatically: the task ends deferred",
}
IN_STUDY_DEFER = "deferred to the next planning cycle"
"""What ``defer`` means in a study's cycle, whose tasks carry to the next cycle's plan."""


def note_id_for(req: DiagnoseInput) -> str:
    """Deterministic note id: the same failure always gets the same id."""
    key = f"{req.run_id}/{req.task_id}/{req.kind}/{req.attempt}"
    return "ref-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


@dataclass
class MemoryView:
    """What memory said about a failure: mined patterns and a proven fix, if any."""

    patterns: list[Pattern] = field(default_factory=list[Pattern])
    fix: list[PatchChange] = field(default_factory=list[PatchChange])
    source: PatchSource = "none"
    ref: str = ""
    notes: list[str] = field(default_factory=list[str])


class Reflection:
    """The reflection pool's ``diagnose_failure``: the rule table, the run's signals, memory.

    Args:
        store: the memory store (episodes, rules, ledger); ``None`` without memory.
        events: the event database engine the run's signals are read from.
        budget_s: how long memory and signals may take before the rule table answers alone.
    """

    def __init__(self, store: MemoryStore | None, events: AsyncEngine | None, *,
                 budget_s: float = 3.0) -> None:
        self.store = store
        self.events = events
        self.budget_s = budget_s

    @DIAGNOSE_FAILURE.defn
    async def diagnose_failure(self, req: DiagnoseInput) -> ReflectionNote:
        """Diagnose one failed approval, execution or verification (reflection pool)."""
        first = _RULES[req.kind](req)
        try:
            view = await asyncio.wait_for(self._recall(req, first.root_cause), self.budget_s)
        except Exception as err:  # memory is advice: the rule table answers without it
            log.warning("memory unavailable for %s/%s: %s", req.run_id, req.task_id, err)
            view = MemoryView(notes=[f"memory unavailable ({type(err).__name__}): the rule "
                                     "table answered alone"])
        note = diagnose(req, view)
        await self._ledger(req, note)
        return note

    async def _recall(self, req: DiagnoseInput, root_cause: str) -> MemoryView:
        view = MemoryView()
        kind = task_kind(req.action, req.job, req.input_names) if req.action else ""
        episodes: list[Episode] = []
        if self.store is not None and kind and req.memory:
            episodes = await self.store.episodes(kind, limit=200)
            rules, _ = await self.store.rules(kind)
            if root_cause != "unknown":
                found = proven_fix(req.job, root_cause, rules, episodes)
                if found is not None:
                    view.fix, view.source, view.ref = found
        signals = await read_signals(self.events, req.run_id) if self.events else []
        view.patterns = mine(signals, episodes, root_cause=root_cause, task_id=req.task_id)
        return view

    async def _ledger(self, req: DiagnoseInput, note: ReflectionNote) -> None:
        """Append the note and its patch to the memory ledger (best effort, never fatal)."""
        if self.store is None or not req.memory:
            return
        entries = [LedgerEntry(
            entry_id=f"note/{note.note_id}", kind="note", run_id=req.run_id,
            task_id=req.task_id,
            body={"note_id": note.note_id, "kind": note.kind, "root_cause": note.root_cause,
                  "likely_fix": note.likely_fix, "confidence": note.confidence,
                  "decision": note.decision, "source": note.source,
                  "memory_ref": note.memory_ref,
                  "patterns": [p.key for p in note.patterns]})]
        if note.patch is not None:
            entries.append(LedgerEntry(
                entry_id=f"patch/{note.patch.patch_id}", kind="patch", run_id=req.run_id,
                task_id=req.task_id,
                body={"note_id": note.note_id, **note.patch.model_dump(mode="json")}))
        try:
            # what is left of the activity's few seconds once memory has been read
            await asyncio.wait_for(self.store.append_ledger(entries), min(self.budget_s, 1.5))
        except Exception as err:  # the note is still returned; the ledger catches up never
            log.warning("memory ledger not written for %s: %s", note.note_id, err)


def diagnose(req: DiagnoseInput, memory: MemoryView | None = None) -> ReflectionNote:
    """The reflection note for a failure: diagnosis, guarded patch, confidence and decision.

    A proven fix from ``memory`` replaces the rule table's patch when its guardrails pass.
    """
    return scored(req, _RULES[req.kind](req), memory)


def scored(req: DiagnoseInput, found: Diagnosis, memory: MemoryView | None = None, *,
           origin: PatchSource = "rule_table", note_id: str | None = None) -> ReflectionNote:
    """The note for ``found``: its patch guarded, scored by the reflection formulas, decided.

    The rule table's diagnoses and the reflector's (``origin="model"``, a ``note_id`` of
    its own) go through this one path, so both meet the same guardrails and thresholds.
    """
    view = memory or MemoryView()
    source: PatchSource = origin if found.changes else "none"
    if view.fix:
        found.changes, source = view.fix, view.source
        found.known = True
        proof = (f"semantic rule {view.ref}" if view.source == "semantic_rule"
                 else f"episode {view.ref}")
        found.reason += f"; memory has a proven fix ({proof})"
        found.evidence.append(f"memory: {proof} fixed {found.root_cause} for this task type")
    found.evidence.extend(view.notes)
    found.evidence.extend(f"pattern {p.kind}: {p.detail}" for p in view.patterns)
    proven = source in ("semantic_rule", "episodic")
    patched, refused = _guarded(req, found)
    actions = len(found.changes) if patched is not None else len(found.relink) or None
    if found.fixed_confidence is not None:
        confidence = found.fixed_confidence
    else:
        divergence = len({v.verdict for v in req.verdicts}) > 1
        confidence = confidence_score(known_pattern=found.known,
                                      proven_fix=proven and patched is not None,
                                      actions=actions, divergence=divergence,
                                      attempt=req.attempt)
    note_id = note_id or note_id_for(req)
    patch = None if patched is None else _patch(req, found, note_id, patched, confidence,
                                                proven=proven)
    risk = None if patch is None else patch.risk
    decision = gated_decision(confidence, risk) if actions else "defer"
    reason = found.reason + (f"; patch dropped: {'; '.join(refused)}" if refused else "")
    if risk is not None and risk_ceiling(risk) != "retry":
        reason += f"; patch risk {risk:.2f} (above the low 0.15)"
    evidence = [*found.evidence, *(f"guardrail: {v}" for v in refused)]
    return ReflectionNote(
        note_id=note_id, task_id=req.task_id, kind=req.kind, root_cause=found.root_cause,
        likely_fix=found.likely_fix, confidence=confidence, evidence=evidence, patch=patch,
        patched_job=patched, relink=found.relink, decision=decision,
        reason=f"{reason} (confidence {confidence:.2f}: {_said(decision, req.run_id)})",
        source=source if patched is not None else "none",
        memory_ref=view.ref if patched is not None and proven else "",
        patterns=view.patterns)


def diagnosis_of(note: ReflectionNote, run_id: str) -> str:
    """The note's reason without the decision :func:`scored` closed it with.

    What the rule table alone would decide ("the task ends deferred") is not what happens to
    a failure a later step takes up (the reflector, then the debuggers): a role shown the note
    reads the diagnosis and its evidence, not that decision.
    """
    return note.reason.removesuffix(
        f" (confidence {note.confidence:.2f}: {_said(note.decision, run_id)})")


def _said(decision: RetryDecision, run_id: str) -> str:
    """The decision in words; deferring means the next planning cycle only in a study."""
    if decision == "defer" and in_study(run_id):
        return IN_STUDY_DEFER
    return _DECISION_WORDS[decision]


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
           confidence: float, *, proven: bool) -> Patch:
    return sealed(Patch(
        patch_id="patch-" + note_id.removeprefix("ref-"), task_id=req.task_id,
        root_cause=found.root_cause, changes=found.changes, confidence=confidence,
        risk=risk_score(changes=len(found.changes), from_memory=proven, confidence=confidence),
        from_semantic_memory=proven, safety_checks=safety_checks(req.job, patched)))
