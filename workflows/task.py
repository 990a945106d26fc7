"""TaskWorkflow: one task of a plan through the executive phases.

intake -> implement -> execute -> verify -> finalize, each move checked against
``workflows.phases.TRANSITIONS``. The state after every phase is kept in ``snapshots`` (the
checkpoint a later branch starts from) and exposed by the ``progress`` query; phase and status
are mirrored in search attributes so ``temporal workflow list --query`` can filter tasks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.constants import KIND_KEY, PHASE_KEY, STATUS_KEY, digest
    from workflows.contracts import (
        ExecuteJobInput,
        ExecutionOutcome,
        TaskStatus,
        Verification,
        VerifyEvidenceInput,
    )
    from workflows.events import EventLog, upsert_keywords
    from workflows.phases import Phase, check_transition
    from workflows.plan import JobSpec
    from workflows.results import Provenance, TaskInput, TaskProgress, TaskResult

EXECUTE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=3,
    non_retryable_error_types=["InvalidJob", "InputChanged"],
)
VERIFY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


def _cause(err: BaseException) -> str:
    """The innermost message of an activity failure (what the activity itself said)."""
    while err.__cause__ is not None:
        err = err.__cause__
    return str(err)


@workflow.defn
class TaskWorkflow:
    """Runs, verifies and finalizes one task; never fails on a job's failure."""

    def __init__(self) -> None:
        self._phase = Phase.INTAKE
        self._status: TaskStatus = "pending"
        self._attempts: dict[str, int] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}

    @workflow.query
    def progress(self) -> TaskProgress:
        """Current phase, status and attempts per phase."""
        info = workflow.info()
        return TaskProgress(task_id=info.workflow_id, phase=self._phase, status=self._status,
                            attempts=dict(self._attempts))

    @workflow.run
    async def run(self, task: TaskInput) -> TaskResult:
        """Take the task from intake to a final status."""
        decision = task.decision
        log = EventLog(task.run_id, decision.task_id, depth=1)
        started = workflow.now()
        self._set_status("running")
        log.add("checkpoint", "start", status="running",
                inputs={"action": decision.action, "priority": decision.priority})
        result = await self._pipeline(task, log)
        result.started_at, result.finished_at = started, workflow.now()
        self._move(Phase.DONE)
        log.add("checkpoint", "complete", status=result.status,
                outputs={"status_reason": result.status_reason,
                         "artifacts": [a.name for a in result.artifacts]})
        await log.flush()
        return result

    async def _pipeline(self, task: TaskInput, log: EventLog) -> TaskResult:
        decision = task.decision
        self._move(Phase.IMPLEMENT)
        job = decision.job
        if job is None or job.source is None:
            return self._finalize(task, "deferred",
                                  "no job to run: the plan gives this task no `job`, and no "
                                  "skill or coding agent supplied one; add a `job` to the "
                                  "task or configure a model")
        provenance = Provenance(workflow_id=workflow.info().workflow_id,
                                job_source=job.filename or "",
                                job_sha256=digest(job.source.encode()))
        provenance.approval.attempts = 1
        provenance.approval.decided_by.append("policy:auto")
        self._move(Phase.EXECUTE)
        await log.flush()
        try:
            outcome = await self._execute(task, job, log)
        except ActivityError as err:
            provenance.execution.attempts = self._attempts.get(Phase.EXECUTE, 0)
            reason = f"the sandbox could not run the job: {_cause(err)}"
            log.add("error", "error", agent="sandbox", status="failed", outputs={"reason": reason})
            return self._finalize(task, "failed", reason, provenance=provenance)
        provenance.execution.attempts = self._attempts.get(Phase.EXECUTE, 0)
        if outcome.outcome != "succeeded":
            return self._finalize(task, "failed",
                                  f"approved but execution failed ({outcome.outcome}): "
                                  f"{outcome.reason}", outcome=outcome, provenance=provenance)
        self._move(Phase.VERIFY)
        verification = await self._verify(task, job, outcome, log)
        provenance.verification.attempts = self._attempts.get(Phase.VERIFY, 0)
        provenance.artifacts = [a.name for a in outcome.artifacts]
        provenance.checksums = {a.name: a.sha256 for a in outcome.artifacts}
        if verification.passed:
            return self._finalize(task, "completed", "approved + evidence verified",
                                  outcome=outcome, provenance=provenance,
                                  verification=verification)
        return self._finalize(task, "failed_final",
                              f"evidence missing: {verification.summary}", outcome=outcome,
                              provenance=provenance, verification=verification)

    async def _execute(self, task: TaskInput, job: JobSpec, log: EventLog) -> ExecutionOutcome:
        self._bump(Phase.EXECUTE)
        start_id = log.add("code_exec", "start", agent="sandbox",
                           inputs={"filename": job.filename, "args": job.args,
                                   "resources": job.resources.model_dump()})
        outcome = await workflow.execute_activity(
            "execute_job",
            ExecuteJobInput(run_id=task.run_id, task_id=task.decision.task_id,
                            attempt=self._attempts[Phase.EXECUTE], job=job,
                            inputs=task.decision.resolved_inputs,
                            dependency_artifacts=task.dependency_artifacts),
            result_type=ExecutionOutcome,
            task_queue=task.queues.sandbox,
            start_to_close_timeout=timedelta(seconds=job.resources.timeout_s + 120),
            heartbeat_timeout=timedelta(seconds=task.policy.heartbeat_timeout_s),
            retry_policy=EXECUTE_RETRY,
        )
        ok = outcome.outcome == "succeeded"
        log.add("code_exec", "complete" if ok else "error", agent="sandbox",
                status=outcome.outcome, duration_ms=int(outcome.duration_s * 1000),
                outputs={"exit_code": outcome.exit_code, "reason": outcome.reason,
                         "peak_memory_mb": outcome.peak_memory_mb,
                         "stdout_tail": outcome.stdout_tail[-2000:],
                         "stderr_tail": outcome.stderr_tail[-2000:],
                         "isolation": outcome.isolation},
                meta={"start_event_id": start_id})
        for artifact in outcome.artifacts:
            log.add("file_gen", "complete", agent="sandbox", status="created",
                    outputs={"name": artifact.name, "size": artifact.size,
                             "sha256": artifact.sha256})
        self._snapshot(Phase.EXECUTE, outcome.model_dump(mode="json"))
        return outcome

    async def _verify(self, task: TaskInput, job: JobSpec, outcome: ExecutionOutcome,
                      log: EventLog) -> Verification:
        self._bump(Phase.VERIFY)
        verification = await workflow.execute_activity(
            "verify_evidence",
            VerifyEvidenceInput(task_id=task.decision.task_id, job=job,
                                checks=task.decision.checks, outcome=outcome),
            result_type=Verification,
            task_queue=task.queues.sandbox,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=VERIFY_RETRY,
        )
        log.add("tool_call", "complete" if verification.passed else "error",
                agent="verifier", status="pass" if verification.passed else "fail",
                outputs={"summary": verification.summary, "missing": verification.missing})
        self._snapshot(Phase.VERIFY, verification.model_dump(mode="json"))
        return verification

    def _finalize(self, task: TaskInput, status: TaskStatus, reason: str, *,
                  outcome: ExecutionOutcome | None = None,
                  provenance: Provenance | None = None,
                  verification: Verification | None = None) -> TaskResult:
        self._move(Phase.FINALIZE)
        self._set_status(status)
        decision = task.decision
        result = TaskResult(
            task_id=decision.task_id, priority=decision.priority, action=decision.action,
            status=status, status_reason=reason,
            attempts_total=sum(self._attempts.values()),
            artifacts=verification.artifacts if verification else [],
            metrics=outcome.metrics if outcome else {},
            checks=verification.checks if verification else [],
            execution=outcome, provenance=provenance or Provenance(),
        )
        self._snapshot(Phase.FINALIZE, {"status": status, "status_reason": reason})
        return result

    def _move(self, nxt: Phase) -> None:
        self._phase = check_transition(self._phase, nxt)
        upsert_keywords(**{PHASE_KEY.name: nxt.value})

    def _set_status(self, status: TaskStatus) -> None:
        self._status = status
        upsert_keywords(**{STATUS_KEY.name: status, KIND_KEY.name: "task"})

    def _bump(self, phase: Phase) -> None:
        self._attempts[phase] = self._attempts.get(phase, 0) + 1

    def _snapshot(self, phase: Phase, state: dict[str, Any]) -> None:
        self.snapshots[phase] = {"at": workflow.now().isoformat(), **state}
