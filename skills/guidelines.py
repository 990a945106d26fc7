"""Guideline skills in the library's loop: offered at a match, counted after the task.

A guideline skill (text, no job) never supplies a job; a match offers the ones whose
preconditions hold, by id and score (:func:`matched_guidelines`), and the roles' activities
load their text into prompts. A task that was given one in a prompt reports it with its
outcome; the use counts like a job skill's (:func:`count_guideline_uses`), u and, when the
task completed, s, only when the task's job shows it (alpha_match, :mod:`skills.utilisation`),
so the maintenance's utility sees what guidance did, not what it was offered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from skills.apply import fit
from skills.utilisation import guideline_alpha, used
from workflows.contracts.patterns import Skill
from workflows.contracts.skills import MAX_GUIDELINES, GuidelineRef, TaskOutcome

if TYPE_CHECKING:
    from skills.index import Hit
    from skills.store import SkillStore


def is_guideline(skill: Skill) -> bool:
    """Whether ``skill`` is guidance for prompts: a skill pattern with text and no job."""
    pattern = skill.pattern
    return pattern.kind == "skill" and pattern.job is None and bool(pattern.guideline)


def matched_guidelines(hits: Sequence[Hit], skills: Mapping[str, Skill], text: str,
                       data: Sequence[str], *, can_import: Callable[[str], bool],
                       headers: Mapping[str, Sequence[str]] | None = None,
                       limit: int = MAX_GUIDELINES) -> list[GuidelineRef]:
    """The retrieved guideline skills whose preconditions hold, best similarity first."""
    found: list[GuidelineRef] = []
    for hit in sorted(hits, key=lambda h: (-h.similarity, h.skill_id)):
        skill = skills.get(hit.skill_id)
        if skill is None or not is_guideline(skill):
            continue
        if not fit(skill.pattern, text, data, can_import=can_import, headers=headers).holds:
            continue
        found.append(GuidelineRef(skill_id=skill.skill_id, name=skill.pattern.name,
                                  score=round(max(hit.similarity, 0.0), 4)))
        if len(found) >= limit:
            break
    return found


def use_key(outcome: TaskOutcome, skill_id: str) -> str:
    """The key of one guideline's use by one task: counted once however often retried."""
    return f"{outcome.key}#guideline:{skill_id}"


async def count_guideline_uses(store: SkillStore, outcome: TaskOutcome, at: datetime
                               ) -> tuple[list[tuple[str, bool]], dict[str, float]]:
    """Count the guidelines in the task's prompts that its job used (and whether it succeeded).

    A guideline is used when its alpha_match against the task's final job reaches theta
    (:mod:`skills.utilisation`); one that was only offered is noted as unused and counts
    nothing.

    Returns:
        ``(skill_id, succeeded)`` for each use newly counted (a repeated outcome counts none),
        and the alpha_match of every guideline offered that is still in the library.
    """
    succeeded = outcome.status == "completed"
    counted: list[tuple[str, bool]] = []
    alphas: dict[str, float] = {}
    for skill_id in dict.fromkeys(outcome.guidelines):
        key = use_key(outcome, skill_id)
        try:
            current = await store.get(skill_id)
            alpha = alphas[skill_id] = guideline_alpha(current.pattern, outcome.job)
            if not used(alpha):
                await store.note_unused(skill_id, key=key, alpha=alpha, succeeded=succeeded)
                continue
            skill, _ = await store.record_use(
                skill_id, succeeded=succeeded, duration_s=outcome.duration_s,
                cost_usd=outcome.cost_usd, at=at, deviation="none", key=key, alpha=alpha)
        except (LookupError, ValueError):  # retired and gone since, or malformed figures
            continue
        if skill.metrics.used > current.metrics.used:
            counted.append((skill_id, succeeded))
    return counted, alphas
