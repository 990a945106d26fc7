"""Guideline skills in the library's loop: offered at a match, counted after the task.

A guideline skill (text, no job) never supplies a job; a match offers the ones whose
preconditions hold, by id and score (:func:`matched_guidelines`), and the roles' activities
load their text into prompts. A task that was given one in a prompt reports it with its
outcome, and the use counts like a job skill's (:func:`count_guideline_uses`): u and, when
the task completed, s, so the maintenance's utility sees what guidance did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from skills.apply import fit
from workflows.library.contracts import MAX_GUIDELINES, GuidelineRef, TaskOutcome
from workflows.library.patterns import Skill

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
                               ) -> list[tuple[str, bool]]:
    """Count the guidelines that went into the task's prompts as used (and succeeded).

    Returns:
        ``(skill_id, succeeded)`` for each use newly counted (a repeated outcome counts none).
    """
    succeeded = outcome.status == "completed"
    counted: list[tuple[str, bool]] = []
    for skill_id in dict.fromkeys(outcome.guidelines):
        try:
            before = (await store.get(skill_id)).metrics.used
            skill, _ = await store.record_use(
                skill_id, succeeded=succeeded, duration_s=outcome.duration_s,
                cost_usd=outcome.cost_usd, at=at, deviation="none",
                key=use_key(outcome, skill_id))
        except (LookupError, ValueError):  # retired and gone since, or malformed figures
            continue
        if skill.metrics.used > before:
            counted.append((skill_id, succeeded))
    return counted
