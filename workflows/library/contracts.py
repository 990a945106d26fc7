"""What the skill library exchanges with runs, tasks and its own activities.

Finished tasks reach the long-lived ``SkillLibraryWorkflow`` by signal (:class:`TaskOutcome`);
every ``EXTRACT_EVERY`` outcomes it extracts candidates from the batch, and at 10, 20, 40,
80… outcomes it maintains the library (utility score, prune, merge). At a run's intake a
confident match (:class:`MatchAnswer`) supplies the plan of a goal, or the job of a task that
has none. Pure models only: the workflow sandbox imports this module.
"""

from __future__ import annotations

from pydantic import Field

from workflows.constants import Pool
from workflows.contracts.base import Model
from workflows.contracts.executive import PatchChange
from workflows.contracts.memory import RememberInput
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.contracts.policy import SkillPolicy
from workflows.library.patterns import MAX_GUIDELINES as MAX_GUIDELINES
from workflows.library.patterns import Deviation, GuidelineRef, PatternKind, SkillStep
from workflows.library.subagents import INSTRUCTIONS_CHARS, MemoryTry
from workflows.library.writing import MergeCandidate, PatternBrief

SKILL_LIBRARY_ID = "assay-skill-library"
"""Workflow id of the one long-lived ``SkillLibraryWorkflow`` of the default skills queue."""
TASK_FINISHED = "task_finished"
"""Signal name: a run hands the library one finished task's outcome."""


def library_id(skills_queue: str) -> str:
    """Workflow id of the library served on ``skills_queue`` (one library per queue)."""
    if skills_queue == Pool.SKILLS.value:
        return SKILL_LIBRARY_ID
    return f"{SKILL_LIBRARY_ID}-{skills_queue}"


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
    instructions: str = Field(default="", max_length=INSTRUCTIONS_CHARS)
    """A subagent's instructions, bounded: its task's coder is shown them."""
    rationale: str = ""

    @property
    def subagent(self) -> bool:
        """Whether the task runs as this subagent (its memory is tried before the rule table)."""
        return self.kind == "subagent"


class MatchTask(Model):
    """A task of the plan, as the library sees it at intake."""

    task_id: str
    action: str
    has_job: bool
    input_names: list[str] = Field(default_factory=list[str])
    checked_metrics: list[str] = Field(default_factory=list[str])
    """Metrics the task's checks read: a skill whose job writes not all of them does not fit."""


class MatchInput(Model):
    """Ask the library for patterns fitting a goal (no plan yet) or a plan's jobless tasks."""

    run_id: str
    goal: str | None = None
    data_names: list[str] = Field(default_factory=list[str])
    data_heads: dict[str, str] = Field(default_factory=dict[str, str])
    """Data name -> its first characters (``DataFile.head``): column parameters read the header."""
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
    guidelines: dict[str, list[GuidelineRef]] = Field(
        default_factory=dict[str, list[GuidelineRef]])
    """Per task id (or ``goal``), the guideline skills that match, best first (at most
    ``MAX_GUIDELINES``)."""
    unmatched: list[str] = Field(default_factory=list[str])
    """Task ids (or ``goal``) for which no pattern of a non-empty library was above the
    threshold: a reformulated query may find one."""


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
    guidelines: dict[str, list[GuidelineRef]] = Field(
        default_factory=dict[str, list[GuidelineRef]])
    """Task id (or ``goal``) -> the guideline skills matched for its prompts."""
    guided: dict[str, list[str]] = Field(default_factory=dict[str, list[str]])
    """Task id (or ``planner``) -> the guideline skills that went into its prompts."""


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
    memory_tries: list[MemoryTry] = Field(default_factory=list[MemoryTry], max_length=16)
    """The subagent's remembered fixes the task tried (``skill`` names the subagent), in order;
    ``status`` says whether the task then succeeded."""
    guidelines: list[str] = Field(default_factory=list[str], max_length=16)
    """Guideline skills in the prompts of the task's planner, coder or debuggers (counted as
    used when the task's job shows them, see ``skills.utilisation``)."""
    deviation: Deviation = "none"
    deviation_detail: str = ""
    skills: bool = True
    """Whether the library learns from it (its run's skill policy reports outcomes)."""
    memory: RememberInput | None = None
    """What memory learns from the task, when its run's memory is on: the library hands it to
    ``remember_task`` on ``memory_queue`` before anything else, off the task's path."""
    memory_queue: str = Pool.REFLECTION.value
    writer_queue: str | None = None
    """The agents queue of a run with a model: the library's skill writer runs there. None:
    no model, and the library's deterministic text stands."""

    @property
    def key(self) -> str:
        """``run_id/task_id``: one outcome per task."""
        return f"{self.run_id}/{self.task_id}"


class HandOffInput(Model):
    """Input of ``hand_off_outcome``: a finished task's outcome for the library on a queue."""

    outcome: TaskOutcome
    skills_queue: str = Pool.SKILLS.value


class HandOffAnswer(Model):
    """Which library took the outcome (its workflow id)."""

    library: str


class ExtractInput(Model):
    """A batch of outcomes to extract patterns from."""

    outcomes: list[TaskOutcome]
    auto_approve: float = Field(default=1.01, ge=0, le=1.01)
    """Candidates with at least this confidence become active with no person (>1: never)."""
    briefs: bool = False
    """Answer with briefs of the new patterns for the skill writer (a run had a model)."""


class ExtractAnswer(Model):
    """What one extraction added: new candidates, new versions, patterns updated."""

    created: list[str] = Field(default_factory=list[str])
    versions: list[str] = Field(default_factory=list[str])
    activated: list[str] = Field(default_factory=list[str])
    skipped: list[str] = Field(default_factory=list[str])
    briefs: list[PatternBrief] = Field(default_factory=list[PatternBrief])
    """The new patterns and versions as the skill writer sees them (used with a model)."""


class RecordAnswer(Model):
    """What recording a batch of outcomes changed."""

    recorded: int = 0
    used: list[str] = Field(default_factory=list[str])
    flagged: list[str] = Field(default_factory=list[str])
    promoted: list[str] = Field(default_factory=list[str])
    retired: list[str] = Field(default_factory=list[str])
    remembered: list[str] = Field(default_factory=list[str])
    """Subagents whose recovery memory a task's tries or cures updated."""
    unused: list[str] = Field(default_factory=list[str])
    """Skills and guidelines offered to a task whose job did not use them (alpha_match below
    theta, see ``skills.utilisation``): retrieved, not used."""
    utilisation: dict[str, float] = Field(default_factory=dict[str, float])
    """Task key -> beta_util: the share of the patterns offered to it that it used."""


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
    undecided: list[MergeCandidate] = Field(default_factory=list[MergeCandidate])
    """Pairs just below the merge similarity with the same structure: the structural judge
    cannot decide them; with a model the merge judge does, without one they stay apart."""


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
