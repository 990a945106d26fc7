"""Choosing the skill a match applies: hits fitted to the task, scored, the best applied.

``choose`` is what ``SkillLibrary.match_skills`` does for each task (or the goal) once the
index has answered and the rows are read: every hit with a job template is fitted to the
text and data (``skills.apply``) and to the analysis the text names (a job of another kind
does not fit, :func:`kind_problem`), scored (``match_confidence``), and the best that fits
at the run's confidence is applied; otherwise it says why none was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from skills.apply import Fit, fill_text, fit, instantiate
from skills.guidance import prompt_guideline
from workflows.contracts.kinds import describe_kind, named_families
from workflows.contracts.patterns import Skill
from workflows.contracts.plan import Check
from workflows.contracts.policy import SkillPolicy
from workflows.contracts.skills import Retrieved, SkillApplication, SkillUse
from workflows.contracts.subagents import INSTRUCTIONS_CHARS
from workflows.library.formulas import match_confidence

if TYPE_CHECKING:
    from skills.index import Hit

GOAL_KEY = "goal"
GOAL_TASK_ID = "skill-1"
"""Task id of the one task of a plan a skill supplies for a goal."""


def choose(policy: SkillPolicy, key: str, text: str, data: list[str], use_key: str,
           hits: Sequence[Hit], skills: dict[str, Skill], now: datetime, *,
           can_import: Callable[[str], bool], headers: dict[str, list[str]] | None = None,
           checked: Sequence[str] = ()) -> tuple[list[Retrieved], SkillApplication | None, str]:
    """What a match found for one task (or the goal), and the skill it applies, if any.

    Each hit with a job template is fitted to ``text`` and ``data`` and scored; the best that
    fits, at or above the policy's confidence, is applied (its trial version when the
    library's choice says so). A job that does not write every metric in ``checked`` (what
    the task's own checks read) does not fit: its run could only fail verification. The
    third item says why none was, when none was.
    """
    from skills.maintain import choose_version

    found: list[Retrieved] = []
    best: tuple[float, Skill, float, Fit] | None = None
    for hit in hits:
        skill_id, similarity = hit.skill_id, hit.similarity
        skill = skills.get(skill_id)
        if skill is None or skill.pattern.job is None:
            continue
        fitted = fit(skill.pattern, text, data, can_import=can_import,
                     headers=headers)
        unwritten = _unwritten(skill, checked)
        if unwritten:
            fitted.problems.append(f"its job writes no {', '.join(unwritten)} metric, which "
                                   "the task's checks read")
        if (other := kind_problem(text, skill)) is not None:
            fitted.problems.append(other)
        confidence = match_confidence(similarity, fitted.score, skill.metrics, now,
                                      prior=skill.confidence)
        found.append(Retrieved(skill_id=skill_id, similarity=round(similarity, 4),
                               confidence=confidence, preconditions_hold=fitted.holds,
                               problems=fitted.problems[:10]))
        if fitted.holds and confidence >= policy.min_confidence and (
                best is None or confidence > best[0]):
            best = (confidence, skill, similarity, fitted)
    if not policy.apply:
        return found, None, "applying skills is turned off by the run's policy"
    if best is None:
        return found, None, _why_not(found, policy)
    confidence, skill, similarity, fitted = best
    family = [s for s in skills.values() if s.pattern.name == skill.pattern.name]
    active = next((s for s in family if s.status == "active"), skill)
    trial = next((s for s in family if s.status == "trial"), None)
    chosen = choose_version(active, trial, use_key)
    if chosen is not skill:
        refit = fit(chosen.pattern, text, data, can_import=can_import,
                    headers=headers)
        if refit.holds and not _unwritten(chosen, checked):
            fitted = refit
        else:
            chosen = skill
    values, inputs = fitted.values, fitted.inputs
    for item in found:
        item.used = item.skill_id == chosen.skill_id
    pattern = chosen.pattern
    job = instantiate(pattern, values)
    use = SkillUse(
        skill_id=chosen.skill_id, name=pattern.name, version=pattern.version,
        kind=pattern.kind, confidence=confidence, similarity=round(similarity, 4),
        parameters=values, trial=chosen.status == "trial",
        expected_artifacts=list(job.expected_artifacts),
        expected_metrics=list(job.expected_metrics), recovery=list(pattern.recovery),
        instructions=(prompt_guideline(pattern, INSTRUCTIONS_CHARS)
                      if pattern.kind == "subagent" and pattern.guideline else ""),
        rationale=(f"skill {chosen.skill_id} ({pattern.kind}, confidence {confidence:.2f}, "
                   f"similarity {similarity:.2f})"
                   + (" as its trial version" if chosen.status == "trial" else "")
                   + (f" with {_shown(values)}" if values else "")))
    checks = [Check.model_validate(c.model_dump()) for c in pattern.checks]
    return found, SkillApplication(
        task_id=GOAL_TASK_ID if key == GOAL_KEY else key, use=use, job=job,
        action=fill_text(pattern.action or pattern.description, values),
        acceptance_criteria=[fill_text(c, values) for c in pattern.acceptance_criteria],
        checks=checks, inputs=inputs), ""


def kind_problem(text: str, skill: Skill) -> str | None:
    """Why a skill's job is another analysis than the one ``text`` asks for, or None.

    The task's (or goal's) words may name analysis families (``lasso``, ``t-test``); a skill
    whose job's calls name a family none of them covers does another analysis, however alike
    the words. A text naming no family, or a job naming none, is not judged here.
    """
    wanted = named_families(text)
    job = skill.pattern.job
    if not wanted or job is None:
        return None
    kind = describe_kind(skill.pattern.action, job)
    if kind.source != "calls" or any(kind.family == w or kind.family.startswith(w + ".")
                                     for w in wanted):
        return None
    return (f"its job does {kind.family} ({', '.join(kind.calls[:3])}), not the "
            f"{' or '.join(wanted)} the task asks for")


def _unwritten(skill: Skill, checked: Sequence[str]) -> list[str]:
    """The metrics in ``checked`` the skill's job does not say it writes."""
    job = skill.pattern.job
    written = set(job.expected_metrics) if job is not None else set[str]()
    return [m for m in checked if m not in written]


def _why_not(found: list[Retrieved], policy: SkillPolicy) -> str:
    if not found:
        return "no retrieved skill has a job template"
    best = max(found, key=lambda r: r.confidence)
    if not best.preconditions_hold:
        return f"best match {best.skill_id} does not fit: {'; '.join(best.problems[:3])}"
    shown = _below(best.confidence, policy.min_confidence)
    return f"best match {best.skill_id} has confidence {shown}, below {policy.min_confidence:g}"


def _below(confidence: float, threshold: float) -> str:
    """``confidence`` with as few decimals (2 to 6) as show it is below ``threshold``."""
    for digits in range(2, 7):
        shown = f"{confidence:.{digits}f}"
        if float(shown) < threshold:
            return shown
    return f"{confidence:.6f}"


def _shown(values: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))

