"""The library's ``record_outcomes``: what each finished task did with what it was offered.

For each outcome: the guidelines in its prompts and the skill it ran from are judged by the
job it ran (:mod:`skills.utilisation`); a used one counts a use (u) and, when the task
completed, a success (s), an unused one is noted in its audit trail; the task's beta_util goes
in the answer. A subagent's memory learns from the task, a skill that deviated badly too often
goes back to review, and a trial version is promoted or retired once it has enough uses.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from activities.metrics import record
from skills.guidelines import count_guideline_uses
from skills.utilisation import beta_util, job_alpha, used
from workflows.contracts.patterns import Skill
from workflows.contracts.skills import RecordAnswer, TaskOutcome

if TYPE_CHECKING:
    from skills.store import SkillStore

log = logging.getLogger("assay.skills")


def was_used(outcome: TaskOutcome) -> bool:
    """Whether the job of the skill a task was given ran at all (the first half of a use).

    A task given a skill whose job never ran (refused by review, deferred, cancelled before
    executing) retrieved it without using it; one whose job ran then used it when the job it
    ran still does what the skill's does (:func:`skills.utilisation.job_alpha`).
    """
    use = outcome.skill
    return (use is not None and outcome.attempts > 0
            and (outcome.job_author == f"skill:{use.skill_id}"
                 or outcome.job_author.startswith("debugger:")))


async def record_outcomes(store: SkillStore, outcomes: list[TaskOutcome]) -> RecordAnswer:
    """Record each outcome's uses; see the module's docstring."""
    answer = RecordAnswer(recorded=len(outcomes))
    for outcome in outcomes:
        counted, alphas = await count_guideline_uses(store, outcome, datetime.now(UTC))
        for skill_id, succeeded in counted:
            answer.used.append(skill_id)
            record.skill_used(succeeded)
        answer.unused.extend(s for s, a in alphas.items() if not used(a))
        use = outcome.skill
        if use is not None:
            alphas[use.skill_id] = alpha = await _job_alpha(store, outcome)
            if used(alpha):
                await _count_use(store, outcome, alpha, answer)
            else:
                await _unused(store, outcome, alpha)
                answer.unused.append(use.skill_id)
        if alphas:
            answer.utilisation[outcome.key] = beta_util(alphas.values())
    return answer


async def _count_use(store: SkillStore, outcome: TaskOutcome, alpha: float,
                     answer: RecordAnswer) -> None:
    """Count the task's use of its skill, learn its memory, flag it or judge its trial."""
    use = outcome.skill
    assert use is not None
    try:
        before = (await store.get(use.skill_id)).metrics.used
        skill, flagged = await store.record_use(
            use.skill_id, succeeded=outcome.status == "completed",
            duration_s=outcome.duration_s, cost_usd=outcome.cost_usd, at=datetime.now(UTC),
            deviation=outcome.deviation, key=outcome.key, alpha=alpha)
    except (LookupError, ValueError) as err:  # unknown skill or malformed figures:
        log.warning("outcome %s not recorded: %s", outcome.key, err)  # the rest count
        return
    if skill.metrics.used > before:
        answer.used.append(use.skill_id)
        record.skill_used(outcome.status == "completed")
    try:
        if use.subagent and await store.learn_memory(outcome):
            answer.remembered.append(use.skill_id)
    except (LookupError, ValueError) as err:  # the use still counts
        log.warning("memory of %s not updated from %s: %s", use.skill_id, outcome.key, err)
    if flagged:
        answer.flagged.append(use.skill_id)
    if skill.status == "trial":
        await _judge(store, skill, answer)


async def _judge(store: SkillStore, skill: Skill, answer: RecordAnswer) -> None:
    """Promote a trial version that did better than the active one, retire one that did worse."""
    from skills.maintain import judge_trial

    family = await store.family(skill.pattern.name)
    active = next((s for s in family if s.status == "active"), None)
    if active is None:
        return
    verdict = judge_trial(active, skill)
    if verdict == "promote":
        await store.set_status(skill.skill_id, "active", by="skills",
                               note=f"promoted over {active.skill_id}: "
                                    f"{skill.metrics.succeeded}/{skill.metrics.used}"
                                    " trial uses succeeded")
        answer.promoted.append(skill.skill_id)
    elif verdict == "retire":
        await store.set_status(skill.skill_id, "retired", by="skills",
                               note=f"its trial did worse than {active.skill_id}")
        answer.retired.append(skill.skill_id)


async def _job_alpha(store: SkillStore, outcome: TaskOutcome) -> float:
    """alpha_match of the skill the task ran from against the job it ran (0: none ran)."""
    assert outcome.skill is not None
    if not was_used(outcome):
        return 0.0
    try:
        skill = await store.get(outcome.skill.skill_id)
    except (LookupError, ValueError):  # gone since: nothing to compare with
        return 0.0
    return job_alpha(skill.pattern, outcome.job)


async def _unused(store: SkillStore, outcome: TaskOutcome, alpha: float) -> None:
    """Note that the task did not use the skill it was given (its job strayed or never ran)."""
    assert outcome.skill is not None
    try:
        await store.note_unused(outcome.skill.skill_id, key=outcome.key, alpha=alpha,
                                succeeded=outcome.status == "completed")
    except (LookupError, ValueError) as err:
        log.warning("unused skill of %s not noted: %s", outcome.key, err)
