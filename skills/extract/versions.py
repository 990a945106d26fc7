"""The library's side: a draft becomes a new pattern, a new version, or grown evidence.

A draft of an unknown (or wholly retired) family is new, and starts active only when confident
enough to approve alone. A draft whose job a live version already runs adds the batch's
evidence to it. A different job becomes a candidate version only when it did at least as well
in the batch as the active version does in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from skills.extract.cases import sha
from skills.extract.draft import Draft, bounded
from workflows.contracts.patterns import Skill, SkillMetrics, SkillStatus


@dataclass
class Extraction:
    """What one batch yields: new patterns, new versions, grown patterns and why not more."""

    new: list[Skill] = field(default_factory=list[Skill])
    """New patterns: ``candidate``, or ``active`` when confident enough to approve alone."""
    versions: list[Skill] = field(default_factory=list[Skill])
    """New versions of an existing family (always ``candidate``)."""
    updated: list[Skill] = field(default_factory=list[Skill])
    """Existing patterns whose job the batch ran again: evidence and source runs grown."""
    skipped: list[str] = field(default_factory=list[str])
    """Why a group of outcomes yielded nothing, one sentence each."""


def place(draft: Draft, existing: Sequence[Skill], result: Extraction, *, now: datetime,
          auto_approve: float) -> None:
    """Add ``draft`` to ``result`` as new, a new version or grown evidence, or say why not."""
    name = draft.pattern.name
    family = [s for s in existing if s.pattern.name == name]
    live = sorted((s for s in family if s.status != "retired"),
                  key=lambda s: -s.pattern.version)
    top = max((s.pattern.version for s in family), default=0)
    if not live:
        result.new.append(_new(draft, version=top + 1, now=now, auto_approve=auto_approve))
        return
    same = next((s for s in live if s.pattern.job is not None
                 and sha(s.pattern.job.source or "") == draft.sha), None)
    if same is not None:
        result.updated.append(_grown(same, draft, now=now))
        return
    active = next((s for s in live if s.status == "active"), None)
    ratio = round(draft.group.ratio, 4)
    if active is not None and ratio < active.metrics.success_rate:
        result.skipped.append(
            f"{draft.group.label}: a different job succeeded in {ratio:.0%} of the batch, below "
            f"the {active.metrics.success_rate:.0%} of the active {active.skill_id}; no new "
            "version")
        return
    skill = _new(draft, version=top + 1, now=now, auto_approve=2.0)
    bar = "" if active is None else (
        f", at least the active {active.skill_id}'s {active.metrics.success_rate:.0%}")
    result.versions.append(skill.model_copy(update={"note": (
        f"new version of {name}: its job differs from {live[0].skill_id}'s; succeeded in "
        f"{ratio:.0%} of the batch{bar}; awaiting approval")}))


def _new(draft: Draft, *, version: int, now: datetime, auto_approve: float) -> Skill:
    score = draft.confidence
    group = draft.group
    status: SkillStatus = "active" if score >= auto_approve else "candidate"
    note = (f"approved automatically: confidence {score:.2f} ≥ {auto_approve:.2f}"
            if status == "active" else
            f"extracted with confidence {score:.2f}; awaiting approval")
    return Skill(
        pattern=draft.pattern.model_copy(update={"version": version}), status=status,
        metrics=SkillMetrics(evidence_successes=len(group.ok), evidence_failures=len(group.bad)),
        confidence=score, origin="extracted", note=note, created_at=now, updated_at=now)


def _grown(skill: Skill, draft: Draft, *, now: datetime) -> Skill:
    """``skill`` with the batch's evidence added and its source runs appended."""
    runs = list(skill.pattern.source_runs)
    runs.extend(r for r in draft.pattern.source_runs if r not in runs)
    metrics = skill.metrics.model_copy(update={
        "evidence_successes": skill.metrics.evidence_successes + len(draft.group.ok),
        "evidence_failures": skill.metrics.evidence_failures + len(draft.group.bad)})
    pattern = skill.pattern.model_copy(update={"source_runs": bounded(runs)})
    return skill.model_copy(update={"pattern": pattern, "metrics": metrics, "updated_at": now})
