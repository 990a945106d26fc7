"""Contracts of the skill library: patterns, their metrics, outcomes, retrieval and upkeep.

A *pattern* is reusable experience extracted from finished tasks (DESIGN §8):

- a **skill pattern** is guideline text, or a parameterised job template whose arguments and
  data inputs are typed parameters (file paths, numbers with ranges, enumerations) with the
  observed values as defaults;
- a **subagent pattern** is a specialist: instructions, its own memory (the fixes that worked
  for this kind of task) and loop, run as the task's child workflow with that memory.

Finished tasks reach the long-lived ``SkillLibraryWorkflow`` by signal (``TaskOutcome``);
every ``EXTRACT_EVERY`` outcomes it extracts candidates from the batch, and at 10, 20, 40,
80… outcomes it maintains the library (utility score, prune, merge). At a run's intake a
confident match supplies the plan of a goal, or the job of a task that has none.

Pure models and functions only: the workflow sandbox imports this module.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Literal

from pydantic import Field

from workflows.constants import Pool
from workflows.contracts.execution import Model
from workflows.contracts.executive import PatchChange
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.contracts.policy import SkillPolicy

MATCH_SKILLS = "match_skills"
RECORD_OUTCOMES = "record_outcomes"
EXTRACT_SKILLS = "extract_skills"
MAINTAIN_SKILLS = "maintain_skills"
"""Activity names on the skills pool."""
SKILLS_PATCH = "skill-library"
"""Workflow patch id of the skill steps (histories from before them replay without)."""
SKILL_LIBRARY_ID = "assay-skill-library"
"""Workflow id of the one long-lived ``SkillLibraryWorkflow`` of the default skills queue."""
TASK_FINISHED = "task_finished"
"""Signal name: a run hands the library one finished task's outcome."""

EXTRACT_EVERY = 10
"""K: outcomes per extraction batch (seed 003, Table 7)."""
FIRST_MAINTENANCE = 10
"""Maintenance runs at 10, 20, 40, 80… finished tasks (doubling)."""
PRUNE_FRACTION = 0.2
"""Alpha: the bottom share of patterns by utility that maintenance retires."""
MERGE_SIMILARITY = 0.85
"""θ_merge: same-type patterns at least this similar are offered to the merge judge."""
EPSILON = 0.01
"""ε of the utility score."""
TRIAL_USES = 5
"""Uses of a trial version before its measured success decides promotion or retirement."""
FLAG_AFTER_DEVIATIONS = 3
"""Consecutive major deviations after which a skill is taken back to review."""

MAX_NAME = 64
MAX_DESCRIPTION = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

PatternKind = Literal["skill", "subagent"]
SkillStatus = Literal["candidate", "active", "trial", "retired"]
"""``candidate``: extracted or imported, never applied until approved; ``active``: the version
applied to matching tasks; ``trial``: a newer version given ``share`` of matching tasks;
``retired``: pruned, merged, replaced or retired by a person — kept for audit, never matched."""
ParamType = Literal["file_path", "integer", "number", "enum", "string", "boolean"]
Deviation = Literal["none", "minor", "major"]


def library_id(skills_queue: str) -> str:
    """Workflow id of the library served on ``skills_queue`` (one library per queue)."""
    if skills_queue == Pool.SKILLS.value:
        return SKILL_LIBRARY_ID
    return f"{SKILL_LIBRARY_ID}-{skills_queue}"


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
    guideline: str = Field(default="", max_length=20_000)
    """Guideline text (a skill of that form) or a subagent's instructions."""
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
    """A subagent's memory: job changes that fixed this kind of task before."""
    contrast: str = Field(default="", max_length=4000)
    """Why successes succeeded and failures failed, in the batch it came from."""
    tags: list[str] = Field(default_factory=list[str], max_length=32)
    source_runs: list[str] = Field(default_factory=list[str], max_length=200)

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


def utility(metrics: SkillMetrics) -> float:
    """Maintenance's utility score (seed 003): s/(u+ε) · log(1+u) · (1 + u/(r+ε)).

    Effectiveness (success per use), frequency (log of uses) and precision (uses per
    retrieval). A pattern never used scores 0.
    """
    r, u, s = metrics.retrieved, metrics.used, metrics.succeeded
    return s / (u + EPSILON) * math.log(1 + u) * (1 + u / (r + EPSILON))


def recency(last_used: datetime | None, now: datetime, *, half_life_days: float = 30.0) -> float:
    """1.0 for a pattern used just now, halving every ``half_life_days``; 0.5 if never used."""
    if last_used is None:
        return 0.5
    days = max((now - last_used).total_seconds(), 0.0) / 86400
    return 0.5 ** (days / half_life_days)


def match_confidence(similarity: float, precondition_match: float, metrics: SkillMetrics,
                     now: datetime, *, prior: float = 0.5) -> float:
    """The seed's weighted confidence of a match (seed 000 §4.4.3).

    0.30 similarity + 0.30 preconditions + 0.25 historical success + 0.10 usage frequency
    (uses / 100, at most 1) + 0.05 recency. A pattern with no use and no extraction evidence
    yet (a built-in or imported one) counts ``prior`` as its historical success: the
    confidence the person or extraction that admitted it gave it.
    """
    known = metrics.used + metrics.evidence_successes + metrics.evidence_failures
    success = metrics.success_rate if known else prior
    score = (0.30 * max(0.0, min(similarity, 1.0)) + 0.30 * precondition_match
             + 0.25 * success + 0.10 * min(metrics.used / 100, 1.0)
             + 0.05 * recency(metrics.last_used, now))
    return round(score, 4)


def maintenance_due(finished: int, last_at: int) -> int | None:
    """The maintenance point reached at ``finished`` outcomes after one at ``last_at``.

    Points are 10, 20, 40, 80…; ``None`` when no new point has been reached.
    """
    point = FIRST_MAINTENANCE
    reached: int | None = None
    while point <= finished:
        if point > last_at:
            reached = point
        point *= 2
    return reached


# --- application --------------------------------------------------------------------------


class SkillUse(Model):
    """A skill a task runs from, as its provenance records it."""

    skill_id: str
    name: str
    version: int
    kind: PatternKind = "skill"
    confidence: float = 0.0
    similarity: float = 0.0
    parameters: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    trial: bool = False
    expected_artifacts: list[str] = Field(default_factory=list[str])
    expected_metrics: list[str] = Field(default_factory=list[str])
    recovery: list[PatchChange] = Field(default_factory=list[PatchChange])
    rationale: str = ""


class MatchTask(Model):
    """A task of the plan, as the library sees it at intake."""

    task_id: str
    action: str
    has_job: bool
    input_names: list[str] = Field(default_factory=list[str])


class MatchInput(Model):
    """Ask the library for patterns fitting a goal (no plan yet) or a plan's jobless tasks."""

    run_id: str
    goal: str | None = None
    data_names: list[str] = Field(default_factory=list[str])
    tasks: list[MatchTask] = Field(default_factory=list[MatchTask])
    policy: SkillPolicy = Field(default_factory=SkillPolicy)


class Retrieved(Model):
    """One retrieved pattern, with how well it fits."""

    skill_id: str
    similarity: float
    confidence: float
    preconditions_hold: bool
    problems: list[str] = Field(default_factory=list[str])
    used: bool = False


class SkillApplication(Model):
    """A pattern applied to one task: the job it supplies and the record of its use."""

    task_id: str
    use: SkillUse
    job: JobSpec
    action: str = ""
    acceptance_criteria: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    inputs: list[str] = Field(default_factory=list[str])


class MatchAnswer(Model):
    """What the library offers: applications for tasks, and what it retrieved and why not."""

    applications: list[SkillApplication] = Field(default_factory=list[SkillApplication])
    """For a goal: at most one, task id ``skill-1``, which becomes the run's plan."""
    retrieved: dict[str, list[Retrieved]] = Field(default_factory=dict[str, list[Retrieved]])
    """Per task id (``goal`` for a goal), the patterns retrieved."""
    reasons: dict[str, str] = Field(default_factory=dict[str, str])
    """Per task id (or ``goal``), why no pattern was applied."""


class SkillReport(Model):
    """What became of one task's outcome for the library: its deviation, whether it arrived."""

    deviation: Deviation = "none"
    detail: str = ""
    reported: bool = False
    miss: str = ""


class SkillSummary(Model):
    """What the skill library did for a run, for its report."""

    applied: dict[str, str] = Field(default_factory=dict[str, str])
    """Task id -> the skill id it ran from."""
    retrieved: dict[str, list[Retrieved]] = Field(default_factory=dict[str, list[Retrieved]])
    reasons: dict[str, str] = Field(default_factory=dict[str, str])
    """Task id (or ``goal``) -> why no skill was applied."""
    deviations: dict[str, Deviation] = Field(default_factory=dict[str, Deviation])
    """Task id -> how far a skill-supplied task's outcome strayed from what it expects."""
    fell_back: str = ""
    """Why the run fell back to planning after its skill plan deviated (empty: it did not)."""
    reported: int = 0
    """Finished tasks handed to the library."""
    misses: int = 0
    warnings: list[str] = Field(default_factory=list[str])


def deviation(status: str, attempts: int, metrics: dict[str, object], artifacts: list[str],
              use: SkillUse) -> tuple[Deviation, str]:
    """How far a skill-supplied task's outcome strayed from the pattern's expectations.

    ``major``: the task did not complete; ``minor``: it completed, but needed more than one
    attempt or lacks an output the pattern expects; ``none`` otherwise.
    """
    if status != "completed":
        return "major", f"the task ended {status}"
    missing = ([m for m in use.expected_metrics if m not in metrics]
               + [a for a in use.expected_artifacts if a not in artifacts])
    if missing:
        return "minor", f"expected outputs missing: {', '.join(missing[:10])}"
    if attempts > 1:
        return "minor", f"completed after {attempts} attempts"
    return "none", ""


# --- outcomes, extraction, maintenance ------------------------------------------------------


class TaskOutcome(Model):
    """One finished task, as a run hands it to the library."""

    run_id: str
    task_id: str
    action: str
    status: str
    failure: str = ""
    """How the last job run failed (``out_of_memory``, ``timeout``...), empty if it did not."""
    goal: str | None = None
    job: JobSpec | None = None
    job_author: str = "plan"
    input_names: list[str] = Field(default_factory=list[str])
    acceptance_criteria: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    metrics: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    artifacts: list[str] = Field(default_factory=list[str])
    attempts: int = 0
    fixes: list[PatchChange] = Field(default_factory=list[PatchChange])
    """Job changes (reflection patches) applied on the way to this outcome."""
    steps: list[SkillStep] = Field(default_factory=list[SkillStep])
    duration_s: float = 0.0
    cost_usd: float = 0.0
    tokens: int = 0
    skill: SkillUse | None = None
    deviation: Deviation = "none"
    deviation_detail: str = ""

    @property
    def key(self) -> str:
        """``run_id/task_id``: one outcome per task."""
        return f"{self.run_id}/{self.task_id}"


class ExtractInput(Model):
    """A batch of outcomes to extract patterns from."""

    outcomes: list[TaskOutcome]
    auto_approve: float = Field(default=1.01, ge=0, le=1.01)
    """Candidates with at least this confidence become active with no person (>1: never)."""


class ExtractAnswer(Model):
    """What one extraction added: new candidates, new versions, patterns updated."""

    created: list[str] = Field(default_factory=list[str])
    versions: list[str] = Field(default_factory=list[str])
    activated: list[str] = Field(default_factory=list[str])
    skipped: list[str] = Field(default_factory=list[str])


class RecordAnswer(Model):
    """What recording a batch of outcomes changed."""

    recorded: int = 0
    used: list[str] = Field(default_factory=list[str])
    flagged: list[str] = Field(default_factory=list[str])
    promoted: list[str] = Field(default_factory=list[str])
    retired: list[str] = Field(default_factory=list[str])


class MaintainInput(Model):
    """One maintenance pass, at ``finished`` outcomes."""

    finished: int = 0


class MaintainAnswer(Model):
    """What maintenance did: scores, pruned and merged patterns."""

    scored: int = 0
    pruned: list[str] = Field(default_factory=list[str])
    merged: dict[str, str] = Field(default_factory=dict[str, str])
    """Absorbed pattern id -> the id it was merged into."""
    refused_merges: list[str] = Field(default_factory=list[str])


class LibraryState(Model):
    """The library workflow's state, carried across continue-as-new."""

    finished: int = 0
    last_maintenance: int = 0
    pending: list[TaskOutcome] = Field(default_factory=list[TaskOutcome])
    """Outcomes recorded but not yet extracted from (at most ``EXTRACT_EVERY`` - 1 between
    batches)."""
    seen: list[str] = Field(default_factory=list[str])
    """Keys of the most recent outcomes, so a repeated signal is not counted twice."""
    auto_approve: float = Field(default=1.01, ge=0, le=1.01)
    extractions: int = 0
    maintenances: int = 0
    continue_after: int = Field(default=500, ge=1)
    """Outcomes one run of the workflow handles before it continues as new."""
