"""The skill writer's prompts, and the checks its answers pass before the library takes them.

Each of the three tasks (write a pattern's text, judge a merge, reformulate a query) renders
its request deterministically (the same pattern gives byte-identical text, so a recording
answers a re-run) and checks the model's answer beyond its schema: text that could harm the
library or a later prompt is refused with the reason, which the gateway sends back for
repair. The schema already caps every text's length.
"""

from __future__ import annotations

import re

from activities.agents.prompting import bullets, message, section
from workflows.contracts.writing import (
    MergeCandidate,
    MergeJudgementOutput,
    PatternBrief,
    ReformulateRequest,
    ReformulationOutput,
    SkillWritingOutput,
)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LINK = re.compile(r"\b(?:https?|ftp|file)://|\bwww\.", re.IGNORECASE)
_ADDRESSED = re.compile(
    r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:instructions?|prompts?|rules)\b"
    r"|\bsystem prompt\b|\byou are now\b|</?\s*(?:script|system|assistant|tool)\b",
    re.IGNORECASE)
_SPACE = re.compile(r"\s+")


# --- prompts ----------------------------------------------------------------------------------


def pattern_text(p: PatternBrief) -> str:
    """A pattern as the writer (or the merge judge) reads it."""
    return "\n\n".join([
        f"### {p.skill_id} ({p.kind})",
        section("Description (computed)", p.description),
        section("Context (computed)", p.context),
        section("Contrast (computed)", p.contrast),
        section("Parameters", bullets(p.parameters)),
        section("Steps", bullets(p.steps)),
        section(f"Successes ({len(p.successes)} shown, {p.recovered} needed a repair)",
                bullets(p.successes)),
        section(f"Failures of the same kind of task ({len(p.failures)} shown)",
                bullets(p.failures)),
    ])


def writing_message(p: PatternBrief) -> str:
    """The user message of ``write_skill``."""
    return message("Write this pattern's text and say whether it is a skill or a subagent.",
                   pattern_text(p))


def merge_message(pair: MergeCandidate) -> str:
    """The user message of ``judge_merge``."""
    return message(
        f"Two patterns of the same structure, similarity {pair.similarity:.3f} (the library "
        "merges on its own from 0.85). Are they the same pattern?",
        pattern_text(pair.first), pattern_text(pair.second))


def reformulate_message(req: ReformulateRequest) -> str:
    """The user message of ``reformulate_query``."""
    data = bullets(req.data_names) if req.data_names else ""
    return message("Nothing in the library matched this. Reformulate it as one query.",
                   section("Original", req.text), section("Data files", data))


# --- checks ------------------------------------------------------------------------------------


def checked_text(field: str, text: str) -> str:
    """``text`` stripped, or ``ValueError`` saying why the library cannot take it."""
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"`{field}` is blank; write it in words")
    if _CONTROL.search(stripped):
        raise ValueError(f"`{field}` contains control characters; write plain text")
    if _LINK.search(stripped):
        raise ValueError(f"`{field}` contains a link; the library works offline, so write the "
                         "text without links")
    if found := _ADDRESSED.search(stripped):
        raise ValueError(f"`{field}` addresses a model ({found.group(0)[:40]!r}); write "
                         "about the pattern only, with no instructions to a model")
    return stripped


def writing(out: SkillWritingOutput) -> SkillWritingOutput:
    """The writer's text, each field checked and stripped."""
    return out.model_copy(update={
        name: checked_text(name, getattr(out, name))
        for name in ("why_it_works", "when_it_fails", "description", "applicability",
                     "kind_reason")})


def judgement(out: MergeJudgementOutput) -> MergeJudgementOutput:
    """The merge judge's verdict, checked: a merge needs all three criteria and its text."""
    reason = checked_text("reason", out.reason)
    if not out.merge:
        return out.model_copy(update={"reason": reason, "description": "",
                                      "applicability": ""})
    unmet = [name for name in ("same_subtask", "compatible_steps", "overlapping_contexts")
             if not getattr(out, name)]
    if unmet:
        raise ValueError(f"`merge` is true but {', '.join(unmet)} is false; merge only when "
                         "all three criteria hold")
    return out.model_copy(update={
        "reason": reason, "description": checked_text("description", out.description),
        "applicability": checked_text("applicability", out.applicability)})


def reformulation(out: ReformulationOutput, original: str) -> str:
    """The new query: one line, checked, and not the original again."""
    query = _SPACE.sub(" ", checked_text("query", out.query))
    if "\n" in out.query.strip():
        raise ValueError("`query` spans several lines; write one line")
    if query.casefold() == _SPACE.sub(" ", original.strip()).casefold():
        raise ValueError("`query` repeats the original; say the same work in other words")
    return query
