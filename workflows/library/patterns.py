"""The skill library's patterns: what a skill or subagent is, and the metrics it carries.

A *pattern* is reusable experience extracted from finished tasks:

- a **skill pattern** is guideline text, or a parameterised job template whose arguments and
  data inputs are typed parameters (file paths, numbers with ranges, enumerations) with the
  observed values as defaults;
- a **subagent pattern** is a specialist: instructions, its own memory (the fixes that worked
  for this kind of task) and loop, run as the task's child workflow with that memory.

What the library exchanges with runs and its activities is in
:mod:`workflows.library.contracts`; its scores and thresholds in :mod:`workflows.library.formulas`.

Pure models and functions only: the workflow sandbox imports this module.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.executive import PatchChange
from workflows.contracts.plan import Check, JobSpec, Scalar

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_GUIDELINE = 200_000
"""Characters of a guideline: a whole imported ``SKILL.md`` body (prompts take a bounded part)."""
MAX_REFERENCE_FILES = 256
"""Referenced files a pattern keeps (``references/…`` text, loaded on demand)."""
MAX_KEPT_FILES = 1000
"""Files of an imported folder a pattern lists (kept by digest in the artifact store)."""
MAX_FLAGS = 32
"""Lines of imported text flagged as trying to instruct a model, kept with a pattern."""
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

PatternKind = Literal["skill", "subagent"]
SkillStatus = Literal["candidate", "active", "trial", "retired"]
"""``candidate``: extracted or imported, never applied until approved; ``active``: the version
applied to matching tasks; ``trial``: a newer version given ``share`` of matching tasks;
``retired``: pruned, merged, replaced or retired by a person — kept for audit, never matched."""
ParamType = Literal["file_path", "integer", "number", "enum", "string", "boolean"]
Deviation = Literal["none", "minor", "major"]


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid skill name (Agent Skills form), or ``None``.

    Lowercase letters, digits and single hyphens, 1-64 characters, no hyphen at either end.
    """
    if not name:
        return "the name is empty"
    if len(name) > MAX_NAME:
        return f"the name has {len(name)} characters (at most {MAX_NAME})"
    if not NAME_PATTERN.match(name):
        return (f"the name {name[:80]!r} must be lowercase letters, digits and single hyphens, "
                "with no hyphen at either end")
    return None


def slug(text: str, *, limit: int = MAX_NAME) -> str:
    """``text`` as a valid skill name: lowercase words joined by single hyphens."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        nxt = f"{out}-{word}" if out else word
        if len(nxt) > limit:
            break
        out = nxt
    return out or "skill"


# --- the pattern ---------------------------------------------------------------------------


class KeptFile(Model):
    """One file of an imported skill folder, kept by its digest in the artifact store."""

    path: str = Field(min_length=1, max_length=1024)
    """Its path in the folder, with ``/`` separators (``scripts/fit.py``, ``LICENSE.txt``)."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)



class SkillParameter(Model):
    """A typed parameter of a job template: one job argument or one data input."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")
    type: ParamType
    target: Literal["arg", "input"] = "arg"
    """``arg``: fills ``job.args[name]``; ``input``: a data file (its name also fills the
    argument of the same name when the job has one)."""
    default: Scalar | None = None
    minimum: float | None = None
    maximum: float | None = None
    options: list[Scalar] = Field(default_factory=list[Scalar], max_length=64)
    extensions: list[str] = Field(default_factory=list[str], max_length=16)
    """For file paths: accepted extensions without the dot (``csv``)."""
    description: str = Field(default="", max_length=500)

    def problem(self, value: Scalar) -> str | None:
        """Why ``value`` does not fit this parameter, or ``None``."""
        where = f"parameter {self.name!r}"
        if self.type in ("integer", "number"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"{where} takes a number, not {value!r}"
            if self.type == "integer" and not float(value).is_integer():
                return f"{where} takes a whole number, not {value!r}"
            if self.minimum is not None and value < self.minimum:
                return f"{where} is {value!r}, below its minimum {self.minimum:g}"
            if self.maximum is not None and value > self.maximum:
                return f"{where} is {value!r}, above its maximum {self.maximum:g}"
            return None
        if self.type == "boolean":
            return None if isinstance(value, bool) else f"{where} takes true or false"
        if self.type == "enum":
            return (None if value in self.options
                    else f"{where} is {value!r}, not one of {self.options}")
        if not isinstance(value, str):
            return f"{where} takes text, not {value!r}"
        if self.type == "file_path":
            ext = value.rsplit(".", 1)[-1].lower() if "." in value else ""
            if self.extensions and ext not in self.extensions:
                return f"{where} needs a {'/'.join(self.extensions)} file, not {value!r}"
        return None


class SkillSignature(Model):
    """What a pattern is about, for matching: keywords and input and output types."""

    keywords: list[str] = Field(default_factory=list[str], max_length=32)
    input_types: list[str] = Field(default_factory=list[str], max_length=16)
    output_types: list[str] = Field(default_factory=list[str], max_length=32)


class Preconditions(Model):
    """When a pattern applies; checked before it is used."""

    input_types: list[str] = Field(default_factory=list[str], max_length=16)
    """One data file of each of these extensions must be given (``["csv"]``)."""
    imports: list[str] = Field(default_factory=list[str], max_length=64)
    """Top-level modules the job imports; each must be importable by the job interpreter."""
    keywords: list[str] = Field(default_factory=list[str], max_length=32)
    """At least one of these words must occur in the goal or the task's action."""


class SkillStep(Model):
    """One step of the agent/step sequence that produced the pattern."""

    agent: str = Field(max_length=64)
    phase: str = Field(max_length=32)
    detail: str = Field(default="", max_length=200)


class SkillPattern(Model):
    """A skill or subagent pattern: what it does, when it applies and how to apply it."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    kind: PatternKind = "skill"
    version: int = Field(default=1, ge=1)
    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION)
    context: str = Field(default="", max_length=4000)
    """Applicability context: the text retrieval matches goals and actions against."""
    guideline: str = Field(default="", max_length=MAX_GUIDELINE)
    """Guideline text (a skill of that form) or a subagent's instructions."""
    references: dict[str, str] = Field(default_factory=dict[str, str],
                                       max_length=MAX_REFERENCE_FILES)
    """Files the guideline refers to (relative path -> text), loaded on demand, never whole."""
    action: str = Field(default="", max_length=4000)
    """The task's action when the pattern supplies a plan (``{name}`` fills parameters)."""
    acceptance_criteria: list[str] = Field(default_factory=list[str], max_length=32)
    signature: SkillSignature = Field(default_factory=SkillSignature)
    preconditions: Preconditions = Field(default_factory=Preconditions)
    parameters: list[SkillParameter] = Field(default_factory=list[SkillParameter], max_length=32)
    steps: list[SkillStep] = Field(default_factory=list[SkillStep], max_length=64)
    job: JobSpec | None = None
    """The job template (a resolved job: ``source`` holds the code); ``None``: guideline only."""
    checks: list[Check] = Field(default_factory=list[Check], max_length=32)
    """Postconditions: machine checks on the job's metrics."""
    recovery: list[PatchChange] = Field(default_factory=list[PatchChange], max_length=16)
    """A subagent's memory: job changes that fixed this kind of task before, most proven first
    (kept by ``workflows.library.subagents.remembered``)."""
    recovery_misses: dict[str, int] = Field(default_factory=dict[str, int], max_length=16,
                                            exclude_if=lambda v: not v)
    """Misses in a row of each remembered fix, by ``workflows.library.subagents.fix_key``
    (left out of the JSON when empty, so patterns without misses read as they always did)."""
    contrast: str = Field(default="", max_length=4000)
    """Why successes succeeded and failures failed, in the batch it came from."""
    tags: list[str] = Field(default_factory=list[str], max_length=32)
    source_runs: list[str] = Field(default_factory=list[str], max_length=200)
    license: str = Field(default="", max_length=4000, exclude_if=lambda v: not v)
    """The licence the skill's folder declared (its front matter's ``license``)."""
    files: list[KeptFile] = Field(default_factory=list[KeptFile], max_length=MAX_KEPT_FILES,
                                  exclude_if=lambda v: not v)
    """Every file of the imported folder but its side file, exported back byte for byte."""
    flags: list[str] = Field(default_factory=list[str], max_length=MAX_FLAGS,
                             exclude_if=lambda v: not v)
    """Lines of the imported text that try to instruct a model (``file:line: why: text``)."""

    @property
    def skill_id(self) -> str:
        """``name@v<version>``: unique in a library."""
        return f"{self.name}@v{self.version}"

    def parameter(self, name: str) -> SkillParameter | None:
        """The parameter called ``name``, if any."""
        return next((p for p in self.parameters if p.name == name), None)


class SkillMetrics(Model):
    """Use statistics: r (retrieved), u (used), s (succeeded), time, cost, evidence."""

    retrieved: int = Field(default=0, ge=0)
    used: int = Field(default=0, ge=0)
    succeeded: int = Field(default=0, ge=0)
    total_duration_s: float = Field(default=0.0, ge=0)
    total_cost_usd: float = Field(default=0.0, ge=0)
    last_used: datetime | None = None
    evidence_successes: int = Field(default=0, ge=0)
    """Successful source tasks the pattern was extracted from."""
    evidence_failures: int = Field(default=0, ge=0)
    deviations: int = Field(default=0, ge=0)
    """Consecutive major deviations (reset by a clean use)."""

    @property
    def success_rate(self) -> float:
        """Successes over uses, counting the extraction evidence; 0.5 with nothing known."""
        wins = self.succeeded + self.evidence_successes
        total = self.used + self.evidence_successes + self.evidence_failures
        return round(wins / total, 4) if total else 0.5

    @property
    def mean_duration_s(self) -> float:
        """Mean run time of a use (0 before the first)."""
        return round(self.total_duration_s / self.used, 3) if self.used else 0.0

    @property
    def mean_cost_usd(self) -> float:
        """Mean model cost of a use (0 before the first)."""
        return round(self.total_cost_usd / self.used, 6) if self.used else 0.0

    def merged(self, other: SkillMetrics) -> SkillMetrics:
        """Both patterns' statistics summed (what a merge keeps)."""
        last = [t for t in (self.last_used, other.last_used) if t is not None]
        return SkillMetrics(
            retrieved=self.retrieved + other.retrieved, used=self.used + other.used,
            succeeded=self.succeeded + other.succeeded,
            total_duration_s=self.total_duration_s + other.total_duration_s,
            total_cost_usd=self.total_cost_usd + other.total_cost_usd,
            last_used=max(last) if last else None,
            evidence_successes=self.evidence_successes + other.evidence_successes,
            evidence_failures=self.evidence_failures + other.evidence_failures,
            deviations=0)


class Skill(Model):
    """One row of the library: a pattern, its status and statistics."""

    pattern: SkillPattern
    status: SkillStatus = "candidate"
    metrics: SkillMetrics = Field(default_factory=SkillMetrics)
    confidence: float = Field(default=0.0, ge=0, le=1)
    """The extraction's confidence (or 1.0 for a person's skill): above the policy's
    ``auto_approve`` a candidate becomes active without a person."""
    share: float = Field(default=0.0, ge=0, le=1)
    """For a ``trial`` version: the share of matching tasks it is given."""
    origin: str = "extracted"
    """``extracted``, ``builtin``, ``imported`` or ``merged``."""
    note: str = ""
    """Why the status is what it is (approved by, pruned, merged into, flagged)."""
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def skill_id(self) -> str:
        """``name@v<version>``."""
        return self.pattern.skill_id


MAX_GUIDELINES = 3
"""Guideline skills a match offers per task (or goal); prompts take them within a budget."""


class GuidelineRef(Model):
    """A matched guideline skill, by id and score only: prompts load its text from the store."""

    skill_id: str = Field(max_length=100)
    name: str = Field(max_length=64)
    score: float = Field(ge=0)
    """Retrieval similarity to the task (or goal); prompts take the best first."""
