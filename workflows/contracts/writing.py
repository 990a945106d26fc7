"""Contracts of the skill writer: the model role that adds judgement to the library.

The library's extraction, merging and retrieval are deterministic; when a run has a model,
the skill writer (one role, three activities on the agents pool) writes a pattern's
contrastive explanation, description and applicability and says whether it is a skill or a
subagent (``write_skill``), judges a merge the structural judge left undecided
(``judge_merge``), and reformulates a retrieval query that matched nothing
(``reformulate_query``). The library applies what the writer said with ``revise_skills``.

Every answer is bounded twice: the ``*Output`` schemas the model fills in cap each text, and
the role refuses text that could harm the library or a later prompt (control characters,
links, instructions to a model). Without a model, or when the writer gives no usable answer,
the deterministic result stands and the miss is recorded. Pure models only: the workflow
sandbox imports this module.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.patterns import MAX_DESCRIPTION, PatternKind
from workflows.contracts.roles import AgentRequest, RoleAnswer

BRIEF_TEXT = 1500
"""Characters of each text of a pattern the writer is shown."""
CASE_LINES = 10
"""Successes, and failures, the writer is shown per pattern."""
CASE_CHARS = 300
EXPLANATION_CHARS = 1200
APPLICABILITY_CHARS = 1200
WRITER_DESCRIPTION_CHARS = min(600, MAX_DESCRIPTION)
REASON_CHARS = 500
QUERY_CHARS = 300
MAX_WRITINGS = 10
"""Patterns one extraction hands the writer (a batch yields at most one per task type)."""
MAX_JUDGED = 5
"""Undecided merges one maintenance pass hands the writer."""


class PatternBrief(Model):
    """A pattern as the writer sees it: its text, its evidence, never its job's code."""

    skill_id: str = Field(max_length=120)
    name: str = Field(max_length=80)
    kind: PatternKind = "skill"
    description: str = Field(default="", max_length=BRIEF_TEXT)
    context: str = Field(default="", max_length=BRIEF_TEXT)
    contrast: str = Field(default="", max_length=BRIEF_TEXT)
    parameters: list[str] = Field(default_factory=list[str], max_length=32)
    """``name (type): description`` of each parameter."""
    steps: list[str] = Field(default_factory=list[str], max_length=16)
    successes: list[str] = Field(default_factory=list[str], max_length=CASE_LINES)
    """One line per successful source task: action, arguments, repairs."""
    failures: list[str] = Field(default_factory=list[str], max_length=CASE_LINES)
    """One line per failed task of the same type: action, arguments, cause."""
    recovered: int = Field(default=0, ge=0)
    """Successes that needed a repair (debugging or a reflection patch)."""


# --- (a, b) explanation, description, applicability and kind ----------------------------------


class SkillWritingOutput(Model):
    """The writer's text for one pattern, and whether it is a skill or a subagent."""

    why_it_works: str = Field(min_length=1, max_length=EXPLANATION_CHARS)
    """What the successes did that the failures did not, and why that mattered."""
    when_it_fails: str = Field(min_length=1, max_length=EXPLANATION_CHARS)
    """The conditions under which the pattern does not work (from the failures)."""
    description: str = Field(min_length=1, max_length=WRITER_DESCRIPTION_CHARS)
    applicability: str = Field(min_length=1, max_length=APPLICABILITY_CHARS)
    """When to use it: the kinds of goals, data and tasks it fits."""
    kind: PatternKind
    """``skill``: a reusable job run as given; ``subagent``: a kind of task that needs its
    own instructions and the memory of the repairs that cured it."""
    kind_reason: str = Field(min_length=1, max_length=REASON_CHARS)


class WriteSkillRequest(AgentRequest):
    """Input of ``write_skill``."""

    pattern: PatternBrief


class WriteSkillAnswer(RoleAnswer):
    """The writer's text for one pattern."""

    skill_id: str
    writing: SkillWritingOutput


# --- (c) the merge judge -----------------------------------------------------------------------


class MergeJudgementOutput(Model):
    """Whether two similar patterns are one, and if so the merged pattern's text."""

    same_subtask: bool
    compatible_steps: bool
    overlapping_contexts: bool
    merge: bool
    reason: str = Field(min_length=1, max_length=REASON_CHARS)
    description: str = Field(default="", max_length=WRITER_DESCRIPTION_CHARS)
    """The merged pattern's description (required when ``merge``)."""
    applicability: str = Field(default="", max_length=APPLICABILITY_CHARS)
    """The merged pattern's applicability (required when ``merge``)."""


class MergeCandidate(Model):
    """A pair the structural judge could not decide: near the merge threshold, same shape."""

    first: PatternBrief
    second: PatternBrief
    similarity: float = Field(ge=0, le=1)


class JudgeMergeRequest(AgentRequest):
    """Input of ``judge_merge``."""

    pair: MergeCandidate


class JudgeMergeAnswer(RoleAnswer):
    """The merge judge's verdict on one pair."""

    first: str
    second: str
    judgement: MergeJudgementOutput


# --- (d) query reformulation ---------------------------------------------------------------------


class ReformulationOutput(Model):
    """One retrieval query in other words."""

    query: str = Field(min_length=1, max_length=QUERY_CHARS)
    reason: str = Field(default="", max_length=REASON_CHARS)


class ReformulateRequest(AgentRequest):
    """Input of ``reformulate_query``: a goal or task action that matched no pattern."""

    text: str = Field(min_length=1, max_length=4000)
    data_names: list[str] = Field(default_factory=list[str], max_length=32)


class ReformulateAnswer(RoleAnswer):
    """The query to match again with."""

    query: str


# --- applying what the writer said ---------------------------------------------------------------


class MergeVerdict(Model):
    """A merge the writer agreed to, with the merged pattern's text."""

    first: str
    second: str
    description: str = Field(min_length=1, max_length=WRITER_DESCRIPTION_CHARS)
    applicability: str = Field(min_length=1, max_length=APPLICABILITY_CHARS)
    reason: str = Field(default="", max_length=REASON_CHARS)


class ReviseInput(Model):
    """Input of ``revise_skills``: the writer's texts and the merges it agreed to."""

    writings: list[WriteSkillAnswer] = Field(default_factory=list[WriteSkillAnswer],
                                             max_length=MAX_WRITINGS)
    merges: list[MergeVerdict] = Field(default_factory=list[MergeVerdict],
                                       max_length=MAX_JUDGED)


class ReviseAnswer(Model):
    """What ``revise_skills`` changed, and what it could no longer apply and why."""

    written: list[str] = Field(default_factory=list[str])
    reclassified: dict[str, str] = Field(default_factory=dict[str, str])
    """Skill id -> its new kind."""
    merged: dict[str, str] = Field(default_factory=dict[str, str])
    """Absorbed pattern id -> the id it was merged into."""
    skipped: list[str] = Field(default_factory=list[str])
