"""Contracts of reflection memory: episodes, semantic rules, procedural templates, patterns.

Memory turns every attempt into knowledge the next plan and the next retry use:

- an *episode* is one attempt of one task: what failed, the patch tried and how it ended;
- a *semantic rule* is a pattern seen in three or more tasks of one task type, promoted with
  the fix that worked (``args.batch_size`` at most 16), validated by every later use and
  demoted when it stops working;
- a *procedural template* is a job spec that succeeded with no retry at least twice, reused
  when a new task of the same type has no job.

The task type memory keys on is the task's kind (:func:`workflows.contracts.kinds.task_kind`):
what its job does, so the same analysis is recognised across runs, plans and phrasings, and
different analyses that open with the same words stay apart. Pure models and functions only:
workflows build the inputs of the memory activities and apply their answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.reflection import PatchChange, PatchSource, Pattern

PROMOTE_AFTER = 3
"""Tasks a (task type, root cause) pattern must be seen in before it becomes a rule."""
CACHE_AFTER = 2
"""Clean successes (no retry, no patch) of one job spec before it becomes a template."""
DEMOTE_BELOW = 0.5
"""A rule whose confidence falls below this stops being applied (status ``demoted``)."""

RuleStatus = Literal["active", "disabled", "demoted", "candidate"]
"""``candidate``: promoted under ``memory.promotion: person``, applied once a person approves."""
Promotion = Literal["auto", "person"]
"""Who makes a promotion final: memory itself, or a person (``assay memory approve``)."""

Limit = Literal["max", "min", "set"]


def rule_confidence(successes: int, failures: int) -> float:
    """Confidence in a rule from its evidence: Laplace's rule of succession, (s+1)/(s+f+2).

    Three clean successes give 0.80, eight give 0.90; every failure pulls it towards 0.
    """
    return round((successes + 1) / (successes + failures + 2), 4)


# --- memory records ------------------------------------------------------------------------


class Recommendation(Model):
    """What a rule changes in a job spec, field by field.

    ``parameters`` maps a patchable job field (``args.batch_size``, ``resources.timeout_s``)
    to a value; ``limits`` says how: ``max`` lowers the field to the value when it is above,
    ``min`` raises it when below, ``set`` sets it.
    """

    action: str = Field(min_length=1, max_length=200)
    parameters: dict[str, Scalar] = Field(min_length=1, max_length=16)
    limits: dict[str, Limit] = Field(default_factory=dict[str, Limit])


class MemoryRule(Model):
    """A semantic rule: a recurring pattern with the fix that worked and its evidence."""

    rule_id: str
    task_type: str
    root_cause: str
    pattern: str
    observation: str
    recommendation: Recommendation
    occurrences: int = Field(default=0, ge=0)
    success_count: int = Field(default=0, ge=0)
    failure_count: int = Field(default=0, ge=0)
    confidence: float = Field(default=0.0, ge=0, le=1)
    status: RuleStatus = "active"
    created_at: datetime | None = None
    last_validated: datetime | None = None
    updated_by: str = "reflection"
    sha256: str = ""
    """Checksum of the rule's content as Assay last wrote it: an edit made outside Assay
    (straight in the database) no longer matches, and the rule is not applied."""


class ProceduralTemplate(Model):
    """A job spec proven by clean successes, reusable by tasks of the same type."""

    template_id: str
    task_type: str
    action: str
    job: JobSpec
    job_sha256: str
    input_names: list[str] = Field(default_factory=list[str])
    clean_successes: int = 0
    uses: int = 0
    successes: int = 0
    cached: bool = False
    created_at: datetime | None = None
    last_used: datetime | None = None


class Episode(Model):
    """One attempt of one task, as memory keeps it."""

    episode_id: str
    recorded_at: datetime
    run_id: str
    task_id: str
    task_type: str
    phase: str
    attempt: int
    root_cause: str = ""
    patch_id: str = ""
    patch_source: PatchSource = "none"
    changes: list[PatchChange] = Field(default_factory=list[PatchChange])
    outcome: str
    """``success``, ``failure`` (the attempt failed), ``fixed`` (it failed and the task then
    completed) or ``unfixed`` (it failed and the task never completed)."""
    fix: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    """For a ``fixed`` failure: the final values of the fields patches changed."""
    environment: str = ""
    job_sha256: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    duration_s: float = 0.0


# --- reflection's view of a run ------------------------------------------------------------


class Signal(Model):
    """One phase outcome reflection reads from the event store (R0)."""

    task_id: str
    phase: Literal["approval", "execution", "verification", "reflection", "approval_gate"]
    signal_type: str
    agent: str = ""
    verdict: str = ""
    flags: list[str] = Field(default_factory=list[str])
    confidence: float | None = None
    missing: list[str] = Field(default_factory=list[str])
    root_cause: str = ""
    environment: str = ""
    seq: int = 0


# --- consulting memory at intake -----------------------------------------------------------


class ConsultTask(Model):
    """A planned task as memory sees it."""

    task_id: str
    action: str
    job: JobSpec | None = None
    input_names: list[str] = Field(default_factory=list[str])


class ConsultInput(Model):
    """Input of ``consult_memory``: the plan's tasks and how boldly to apply memory."""

    run_id: str
    tasks: list[ConsultTask]
    apply_rules: bool = True
    use_templates: bool = True
    min_confidence: float = Field(default=0.75, ge=0, le=1)
    policy: ReviewPolicy = Field(default_factory=ReviewPolicy)


class RuleUse(Model):
    """A rule applied to a task's job, with the changes it made."""

    rule_id: str
    root_cause: str
    confidence: float
    changes: list[PatchChange] = Field(default_factory=list[PatchChange])


class TaskAdvice(Model):
    """What memory changes for one task: rules applied to its job, or a template as its job."""

    task_id: str
    task_type: str
    job: JobSpec | None = None
    """The advised job (rules applied, or the template's); ``None``: keep the plan's."""
    rules: list[RuleUse] = Field(default_factory=list[RuleUse])
    template_id: str | None = None
    skipped: list[str] = Field(default_factory=list[str])
    """Rules and templates that matched but were not used, each with why."""
    similar_to: str | None = None
    """The known task type the advice came from, when the task's own type had none."""
    similarity: float | None = None

    def rationale(self) -> str:
        """One sentence for the plan's rationale."""
        parts: list[str] = []
        for use in self.rules:
            changed = ", ".join(f"{c.field} {c.old_value!r} -> {c.new_value!r}"
                                for c in use.changes)
            parts.append(f"applied rule {use.rule_id} ({use.root_cause}: {changed}; "
                         f"confidence {use.confidence:.2f})")
        if self.template_id:
            parts.append(f"job from procedural template {self.template_id}")
        if parts and self.similar_to:
            parts.append(f"learned on the similar task type {self.similar_to} "
                         f"(similarity {self.similarity or 0:.2f})")
        return "memory: " + "; ".join(parts) if parts else ""


class ConsultAnswer(Model):
    """Advice per task, and what memory could not use (unreadable or conflicting rules)."""

    advice: list[TaskAdvice] = Field(default_factory=list[TaskAdvice])
    warnings: list[str] = Field(default_factory=list[str])


# --- remembering a finished task -----------------------------------------------------------


class AttemptRecord(Model):
    """One failed attempt of a task, with the reflection it got."""

    phase: str
    attempt: int
    root_cause: str = ""
    note_id: str = ""
    patch_id: str = ""
    patch_source: PatchSource = "none"
    changes: list[PatchChange] = Field(default_factory=list[PatchChange])
    patch_outcome: str = ""
    rule_id: str = ""
    """The semantic rule the patch came from, if any."""


class RememberInput(Model):
    """Input of ``remember_task``: a finished task, its attempts and what memory gave it."""

    run_id: str
    task_id: str
    action: str
    status: str
    finished_at: datetime
    first_job: JobSpec | None = None
    final_job: JobSpec | None = None
    failures: list[AttemptRecord] = Field(default_factory=list[AttemptRecord])
    attempts: int = 0
    metrics: dict[str, Any] = Field(default_factory=dict[str, Any])
    duration_s: float = 0.0
    environment: str = ""
    input_names: list[str] = Field(default_factory=list[str])
    rules_applied: list[str] = Field(default_factory=list[str])
    template_id: str | None = None
    promotion: Promotion = "auto"


class RememberAnswer(Model):
    """What memory learned from one task."""

    task_type: str
    episodes: int = 0
    rules_promoted: list[str] = Field(default_factory=list[str])
    rules_validated: list[str] = Field(default_factory=list[str])
    rules_demoted: list[str] = Field(default_factory=list[str])
    templates_cached: list[str] = Field(default_factory=list[str])
    candidates: list[str] = Field(default_factory=list[str])
    """Rules and templates promoted under ``memory.promotion: person``, awaiting approval."""
    pruned: int = 0


class RememberTasksInput(Model):
    """Input of ``remember_tasks``: finished tasks for one memory, learned from in order."""

    tasks: list[RememberInput] = Field(default_factory=list[RememberInput])


class RememberTasksAnswer(Model):
    """What memory learned from each of those tasks, in the same order."""

    answers: list[RememberAnswer] = Field(default_factory=list[RememberAnswer])


class ReflectionSummary(Model):
    """Reflection in a run's report: patterns, patches and what memory learned."""

    patterns: list[Pattern] = Field(default_factory=list[Pattern])
    patches_applied: int = 0
    patches_succeeded: int = 0
    rules_applied: list[str] = Field(default_factory=list[str])
    rules_promoted: list[str] = Field(default_factory=list[str])
    rules_validated: list[str] = Field(default_factory=list[str])
    rules_demoted: list[str] = Field(default_factory=list[str])
    templates_cached: list[str] = Field(default_factory=list[str])
    templates_used: list[str] = Field(default_factory=list[str])
    misses: int = 0
    warnings: list[str] = Field(default_factory=list[str])
