"""What a TaskWorkflow knows about its task, and the bookkeeping every step shares.

One plain object, built by the workflow and handed to each of its steps: they read and change
the task through it, so every phase change is checked against the transition table, recorded
as a checkpoint event and mirrored in search attributes the same way, whoever makes it.
Deterministic workflow code only.
"""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.common.advisory import Missed
    from workflows.common.events import EventLog, upsert, upsert_keywords
    from workflows.constants import ATTEMPTS_KEY, KIND_KEY, PHASE_KEY, STATUS_KEY, digest
    from workflows.contracts.alternatives import BranchSpec
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus, Verification
    from workflows.contracts.plan import Complexity, JobSpec
    from workflows.contracts.reflection import Patch, ReflectionNote
    from workflows.contracts.results import (
        PHASE_MARKS,
        AppliedPatch,
        PhaseMark,
        Provenance,
        TaskInput,
        TaskResult,
    )
    from workflows.contracts.roles import EnvironmentFacts
    from workflows.contracts.spend import ModelSpend
    from workflows.contracts.subagents import MemoryTry
    from workflows.contracts.verdicts import ReviewVerdict
    from workflows.task.phases import Phase, check_transition
    from workflows.task.retrying import retries_for

AnswerT = TypeVar("AnswerT")


class Finish(Exception):  # control flow: the task ends with this status
    """Raised inside the pipeline to end the task with a final status."""

    def __init__(self, status: TaskStatus, reason: str) -> None:
        super().__init__(reason)
        self.status: TaskStatus = status
        self.reason = reason


class TaskState:
    """Everything a task knows about itself, and how it records progress."""

    def __init__(self, task: TaskInput) -> None:
        self.task = task
        self.log = EventLog(task.run_id, task.scope(), depth=1, parent=task.parent_event)
        self.phase = Phase.INTAKE
        self.status: TaskStatus = "pending"
        self.attempts: dict[str, int] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.job: JobSpec | None = task.decision.job
        self.verdicts: list[ReviewVerdict] = []
        self.notes: list[ReflectionNote] = []
        self.outcome: ExecutionOutcome | None = None
        self.verification: Verification | None = None
        self.provenance = Provenance(workflow_id=workflow.info().workflow_id)
        self.patches: list[Patch] = []
        self.branches_asked: list[BranchSpec] = []
        """Branches a person answered the error gate with (the run starts them)."""
        self.timeline: list[PhaseMark] = []
        """Each phase entered and when (workflow time; no command), for the report."""
        self.memory_tries: list[MemoryTry] = []
        """The remembered fixes of the subagent this task runs as that it tried, in order."""
        self.tier: Complexity = "full"
        """The task's tier (``workflows.task.tiering``); full until classified."""
        self.run_facts: EnvironmentFacts | None = None
        """The packages of the run's named environment, once prepared for the coder: the
        model reviewers of a job that runs there read them too."""

    def move(self, nxt: Phase) -> None:
        """Enter phase ``nxt`` (checked against the transition table) and record it."""
        self.phase = check_transition(self.phase, nxt)
        self.timeline.append(PhaseMark(phase=nxt.value, at=workflow.now()))
        self.log.open("checkpoint", "info", status=nxt.value,
                      outputs={"attempts": dict(self.attempts)}, holds="phase")
        upsert_keywords(**{PHASE_KEY.name: nxt.value})
        self.log.details.set("phase", f"Task {self.task.scope()}: phase **{nxt.value}**")

    def set_status(self, status: TaskStatus) -> None:
        """Set the task's status, mirrored in its search attributes."""
        self.status = status
        upsert_keywords(**{STATUS_KEY.name: status, KIND_KEY.name: "task"})
        self.log.details.set("status", f"Task status: **{status}**")

    def bump(self, phase: Phase) -> None:
        """Count one more attempt at ``phase``."""
        self.attempts[phase] = self.attempts.get(phase, 0) + 1
        upsert(ATTEMPTS_KEY.value_set([f"{p}:{n}" for p, n in sorted(self.attempts.items())]))

    def first(self, retry_phase: Phase) -> bool:
        """Whether the task is in its first round of ``retry_phase``."""
        return self.attempts.get(retry_phase, 0) <= 1

    def retries_allowed(self, failure: str) -> int:
        """The retries ``failure`` gets: the policy's number, else its category's.

        Args:
            failure: a sandbox outcome, ``rejected`` or ``verification``.
        """
        return retries_for(failure, self.task.policy.max_retries)

    def retries_spent(self, retry_phase: Phase, failure: str) -> bool:
        """Whether ``retry_phase`` has had all the retries ``failure`` is allowed."""
        return self.attempts.get(retry_phase, 0) >= self.retries_allowed(failure)

    def snapshot(self, phase: Phase, state: dict[str, Any]) -> None:
        """Keep the state the task had in ``phase`` (the ``checkpoint`` query's answer)."""
        self.snapshots[phase] = {"at": workflow.now().isoformat(), **state}

    def record_patch(self, patch: Patch, decision: str) -> AppliedPatch:
        """Add a patch reflection offered to the provenance; the caller sets its outcome."""
        self.patches.append(patch)
        record = AppliedPatch(patch_id=patch.patch_id, phase=self.phase,
                              root_cause=patch.root_cause, changes=patch.changes,
                              risk=patch.risk, confidence=patch.confidence,
                              sha256=patch.sha256, decision=decision)
        self.provenance.patches.append(record)
        return record

    def answered(self, answer: AnswerT | Missed) -> AnswerT | None:
        """A learning pool's answer, or None with the miss counted in the provenance."""
        if isinstance(answer, Missed):
            self.provenance.reflection_misses += 1
            return None
        return answer

    def completed_reason(self) -> str:
        """Why a task that went through every phase completed."""
        patched = [p.patch_id for p in self.provenance.patches if p.outcome == "applied"]
        reason = "approved + evidence verified"
        return f"{reason} after patch {', '.join(patched)}" if patched else reason

    def finalize(self, status: TaskStatus, reason: str, model: ModelSpend) -> TaskResult:
        """Enter ``finalize`` and build the task's whole result.

        ``model`` is what its agents spent; ``workflows.task.report.finish`` cuts the result
        to fit.
        """
        self.move(Phase.FINALIZE)
        self.set_status(status)
        prov = self.provenance
        prov.execution.attempts = self.attempts.get(Phase.EXECUTE, 0)
        prov.verification.attempts = self.attempts.get(Phase.VERIFY, 0)
        prov.approval.attempts = self.attempts.get(Phase.REVIEW, 0)
        verification = self.verification
        if self.job is not None and self.job.source is not None:
            prov.job_source = self.job.filename or ""
            prov.job_sha256 = digest(self.job.source.encode())
        if self.outcome is not None:
            prov.artifacts = [a.name for a in self.outcome.artifacts]
            prov.checksums = {a.name: a.sha256 for a in self.outcome.artifacts}
        decision = self.task.decision
        result = TaskResult(
            task_id=decision.task_id, priority=decision.priority, action=decision.action,
            status=status, status_reason=reason, attempts_total=sum(self.attempts.values()),
            artifacts=verification.artifacts if verification else [],
            metrics=self.outcome.metrics if self.outcome else {},
            checks=verification.checks if verification else [],
            execution=self.outcome,
            verdicts=self.verdicts, reflections=self.notes, provenance=prov, model=model,
            phases=_kept(self.timeline), job=self.job, branch=self.task.branch,
            branches_asked=self.branches_asked)
        self.snapshot(Phase.FINALIZE, {"status": status, "status_reason": reason})
        return result



def _kept(marks: list[PhaseMark]) -> list[PhaseMark]:
    """The first and last phase changes, at most ``PHASE_MARKS`` of them."""
    if len(marks) <= PHASE_MARKS:
        return list(marks)
    half = PHASE_MARKS // 2
    return [*marks[:half], *marks[-half:]]
