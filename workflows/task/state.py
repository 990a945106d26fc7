"""The state a TaskWorkflow carries, and its bookkeeping: moves, attempts, the final result.

Split from ``task.py`` so the workflow module reads as the pipeline; everything here is
deterministic workflow code.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.common.gates import GateKeeper
    from workflows.constants import ATTEMPTS_KEY, KIND_KEY, PHASE_KEY, STATUS_KEY, digest
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus, Verification
    from workflows.contracts.executive import Patch, ReflectionNote, ReviewVerdict
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import AppliedPatch, Provenance, TaskInput, TaskResult
    from workflows.task.calls import TaskCalls
    from workflows.task.phases import Phase, check_transition


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
        self.calls = TaskCalls(task)
        self.log = EventLog(task.run_id, task.decision.task_id, depth=1)
        self.gates = GateKeeper(task.policy.gates, self.log, task.decision.task_id)
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
        self.agents = AgentCalls(task.policy.agents, task.queues.agents, self.log, task.budget)
        self.diagnostics = 0

    def _record_patch(self, patch: Patch, decision: str) -> AppliedPatch:
        self.patches.append(patch)
        record = AppliedPatch(patch_id=patch.patch_id, phase=self.phase,
                              root_cause=patch.root_cause, changes=patch.changes,
                              risk=patch.risk, confidence=patch.confidence,
                              sha256=patch.sha256, decision=decision)
        self.provenance.patches.append(record)
        return record

    def _completed_reason(self) -> str:
        patched = [p.patch_id for p in self.provenance.patches if p.outcome == "applied"]
        reason = "approved + evidence verified"
        return f"{reason} after patch {', '.join(patched)}" if patched else reason

    def _finalize(self, status: TaskStatus, reason: str) -> TaskResult:
        self._move(Phase.FINALIZE)
        self._set_status(status)
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
            execution=trimmed(self.outcome),
            verdicts=self.verdicts, reflections=self.notes, provenance=prov,
            model=self.agents.spend)
        self._snapshot(Phase.FINALIZE, {"status": status, "status_reason": reason})
        return result

    def _move(self, nxt: Phase) -> None:
        self.phase = check_transition(self.phase, nxt)
        self.log.add("checkpoint", "info", status=nxt.value,
                     outputs={"attempts": dict(self.attempts)})
        upsert_keywords(**{PHASE_KEY.name: nxt.value})

    def _set_status(self, status: TaskStatus) -> None:
        self.status = status
        upsert_keywords(**{STATUS_KEY.name: status, KIND_KEY.name: "task"})

    def _bump(self, phase: Phase) -> None:
        self.attempts[phase] = self.attempts.get(phase, 0) + 1
        workflow.upsert_search_attributes(  # pyright: ignore[reportUnknownMemberType]
            [ATTEMPTS_KEY.value_set([f"{p}:{n}" for p, n in sorted(self.attempts.items())])])

    def _first(self, retry_phase: Phase) -> bool:
        return self.attempts.get(retry_phase, 0) <= 1

    def _snapshot(self, phase: Phase, state: dict[str, Any]) -> None:
        self.snapshots[phase] = {"at": workflow.now().isoformat(), **state}


RESULT_TAIL_CHARS = 2000
"""Output kept per stream in a task's result (the full bounded tails are in its events)."""


def trimmed(outcome: ExecutionOutcome | None) -> ExecutionOutcome | None:
    """The outcome with short output tails, so a run's result stays far below payload limits."""
    if outcome is None:
        return None
    return outcome.model_copy(update={"stdout_tail": outcome.stdout_tail[-RESULT_TAIL_CHARS:],
                                      "stderr_tail": outcome.stderr_tail[-RESULT_TAIL_CHARS:]})


def describe_rejection(verdicts: list[ReviewVerdict]) -> str:
    """Who rejected and why, from the critical findings (field logic, no text matching)."""
    parts = [f"{v.reviewer}: " + "; ".join(
        f"{f.message}" + (f" (line {f.line})" if f.line else "") for f in v.critical)
        if v.critical else f"{v.reviewer}: {v.reasoning}"
        for v in verdicts if v.verdict == "REJECT" or v.critical]
    return " | ".join(parts) or "the panel did not approve"
