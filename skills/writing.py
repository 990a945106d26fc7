"""The library's side of the skill writer: what the writer is shown, and how its text lands.

``brief`` shows a pattern without its code: its texts, parameters, steps and one line per
success and failure of its kind of task in the batch (``briefs``). ``revised`` puts the
writer's text into a pattern: the description is replaced, the applicability goes before the
computed context (retrieval still finds the task type's words), and the explanation goes
before the computed contrast, whose numbers a model never rewrites; a change of kind brings
the subagent's memory (the proven repairs) with it or drops it. ``merged_by_writer`` merges a
pair the writer agreed to, once the pair is still live and still the same shape.
``writer_said`` gives back what the writer said (explanation, warning, kind) and why
extraction grouped the tasks, for ``assay skills show``. Pure functions: the
``revise_skills`` activity reads and writes the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skills.extract.cases import Case, cases_of, clip, skill_name
from skills.extract.contrast import needed_repair
from skills.maintain import judge, merge, order_pair, scores
from workflows.contracts.patterns import MAX_DESCRIPTION, Skill, SkillPattern
from workflows.contracts.skills import TaskOutcome
from workflows.contracts.writing import (
    BRIEF_TEXT,
    CASE_CHARS,
    CASE_LINES,
    MergeVerdict,
    PatternBrief,
    SkillWritingOutput,
)

CONTEXT_CHARS = 4000
CONTRAST_CHARS = 4000
_WHY = "Why it works: "
_FAILS = "When it does not: "


def brief(skill: Skill, cases: Sequence[Case] = ()) -> PatternBrief:
    """``skill`` as the writer sees it, with the batch's ``cases`` of its kind of task."""
    p = skill.pattern
    ok = [c for c in cases if c.ok][:CASE_LINES]
    bad = [c for c in cases if not c.ok][:CASE_LINES]
    return PatternBrief(
        skill_id=skill.skill_id, name=p.name, kind=p.kind,
        description=clip(p.description, BRIEF_TEXT), context=clip(p.context, BRIEF_TEXT),
        contrast=clip(p.contrast, BRIEF_TEXT),
        parameters=[clip(f"{q.name} ({q.type}): {q.description}", 200) for q in p.parameters],
        steps=[clip(f"{s.agent} · {s.phase}" + (f" · {s.detail}" if s.detail else ""), 200)
               for s in p.steps][:16],
        successes=[_case_line(c) for c in ok], failures=[_case_line(c) for c in bad],
        recovered=sum(1 for c in cases if c.ok and needed_repair(c.outcome)))


def briefs(skills: Sequence[Skill], outcomes: Sequence[TaskOutcome]) -> list[PatternBrief]:
    """Briefs of the patterns an extraction made, each with its task kind's cases."""
    cases, _ = cases_of(outcomes)
    by_name: dict[str, list[Case]] = {}
    for case in cases:
        by_name.setdefault(skill_name(case.task_type), []).append(case)
    return [brief(s, by_name.get(s.pattern.name, [])) for s in skills]


def _case_line(case: Case) -> str:
    o = case.outcome
    args = ", ".join(f"{k}={v!r}" for k, v in sorted(case.job.args.items()))[:120]
    if case.ok:
        fixes = [f"{f.field} {f.old_value!r} → {f.new_value!r}" for f in o.fixes[:3]]
        tail = f"; repaired by {', '.join(fixes)}" if fixes else ""
        return clip(f"{o.action[:150]} ({args}){tail}", CASE_CHARS)
    cause = o.failure or o.deviation_detail or o.status
    return clip(f"{o.action[:150]} ({args}) — {o.status}: {cause}", CASE_CHARS)


def revised(skill: Skill, writing: SkillWritingOutput) -> Skill:
    """``skill`` with the writer's description, applicability, explanation and kind.

    A pattern that becomes a skill drops a subagent's memory; one that becomes a subagent
    keeps what it has (the repairs of its later outcomes add to it).
    """
    p = skill.pattern
    computed_context = _computed(p.context, "Computed from the batch:\n")
    computed_contrast = _computed(p.contrast, "From the batch:\n")
    context = f"{writing.applicability}\n\nComputed from the batch:\n{computed_context}"
    contrast = (f"{_WHY}{writing.why_it_works}\n{_FAILS}"
                f"{writing.when_it_fails}\n\nFrom the batch:\n{computed_contrast}")
    update: dict[str, object] = {
        "description": clip(writing.description, MAX_DESCRIPTION),
        "context": clip(context, CONTEXT_CHARS), "contrast": clip(contrast, CONTRAST_CHARS)}
    if writing.kind != p.kind:
        recovery = list(p.recovery) if writing.kind == "subagent" else []
        update |= {"kind": writing.kind, "recovery": recovery,
                   "tags": sorted({writing.kind, *(t for t in p.tags
                                                   if t not in ("skill", "subagent"))})[:32]}
    note = f"written by the skill writer ({writing.kind}: {clip(writing.kind_reason, 200)})"
    return skill.model_copy(update={"pattern": p.model_copy(update=update), "note": note})


def written_detail(writing: SkillWritingOutput) -> dict[str, str]:
    """What the audit trail keeps of the writer's text: its explanation, warning and kind."""
    return {"kind": writing.kind, "why_it_works": writing.why_it_works,
            "when_it_fails": writing.when_it_fails, "kind_reason": writing.kind_reason}


def writer_said(pattern: SkillPattern, written: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``(label, text)`` of what the writer said and of why extraction grouped the tasks.

    ``written`` is the detail of the latest ``written`` event; a skill written before the
    trail kept the text has its explanation read back from its contrast.
    """
    said: list[tuple[str, str]] = []
    detail = dict(written or {})
    if "why_it_works" not in detail and _WHY in pattern.contrast:
        head = pattern.contrast.split("\n\nFrom the batch:\n", 1)[0]
        why, _, fails = head.removeprefix(_WHY).partition("\n" + _FAILS)
        detail |= {"why_it_works": why.strip(), "when_it_fails": fails.strip()}
    for label, key in (("writer explains", "why_it_works"), ("writer warns", "when_it_fails"),
                       ("writer's kind", "kind_reason")):
        if text := str(detail.get(key) or "").strip():
            said.append((label, text))
    grouped = [line for line in pattern.context.splitlines()
               if line.startswith(("Grouped from ", "Task type: "))]
    if grouped:
        said.append(("grouped", " ".join(grouped)))
    return said


def _computed(text: str, marker: str) -> str:
    """The computed part of a text the writer may already have written before."""
    return text.split(marker, 1)[1] if marker in text else text


def merge_problem(first: Skill, second: Skill) -> str | None:
    """Why a pair the writer agreed to merge can no longer be merged, or None."""
    for skill in (first, second):
        if skill.status not in ("active", "trial"):
            return f"{skill.skill_id} is {skill.status} now"
    return judge(first, second)


def merged_by_writer(first: Skill, second: Skill, verdict: MergeVerdict) -> tuple[Skill, Skill]:
    """The pair merged (higher utility survives) with the writer's text on the survivor."""
    survivor, absorbed = order_pair(first, second, scores([first, second]))
    kept, gone = merge(survivor, absorbed)
    computed = _computed(kept.pattern.context, "Computed from the batch:\n")
    context = f"{verdict.applicability}\n\nComputed from the batch:\n{computed}"
    pattern = kept.pattern.model_copy(update={
        "description": clip(verdict.description, MAX_DESCRIPTION),
        "context": clip(context, CONTEXT_CHARS)})
    note = f"{kept.note}; the merge judge: {clip(verdict.reason, 200)}"
    return kept.model_copy(update={"pattern": pattern, "note": note}), gone
