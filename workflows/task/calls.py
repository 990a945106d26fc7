"""The activity calls of a TaskWorkflow, each with its queue, timeouts and retry policy.

Kept apart from the steps that use them so this module reads as the list of side effects a
task may cause.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import (
        EXECUTE_JOB,
        PREPARE_ENVIRONMENT,
        PROBE_ENVIRONMENT,
        RESCAN_ARTIFACTS,
        REVIEWERS,
        VERIFY_EVIDENCE,
    )
    from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
    from workflows.contracts.execution import (
        ExecuteJobInput,
        ExecutionOutcome,
        Verification,
        VerifyEvidenceInput,
    )
    from workflows.contracts.metadata import job_summary
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.reflection import RescanInput, RescanResult
    from workflows.contracts.results import TaskInput
    from workflows.contracts.roles import EnvironmentFacts
    from workflows.contracts.verdicts import InputDigest, ReviewInput, ReviewVerdict

JOB_GRACE = timedelta(seconds=120)
"""Time an execute attempt gets beyond the job's own timeout (workspace, hashing, hand-back)."""
EVIDENCE_BASE = timedelta(minutes=5)
"""Time a verification attempt gets whatever its artifacts weigh."""
EVIDENCE_BYTES_PER_S = 20 * 1024 * 1024
"""The pace artifacts are assumed read back at (a slow S3 store): more time per byte."""


def evidence_timeout(outcome: ExecutionOutcome) -> timedelta:
    """How long one ``verify_evidence`` attempt may take: sized to the artifacts it re-reads.

    It heartbeats meanwhile, so a worker that dies is noticed within the heartbeat timeout;
    this bounds a live worker that reads slowly.
    """
    total = sum(artifact.size for artifact in outcome.artifacts)
    return EVIDENCE_BASE + timedelta(seconds=total / EVIDENCE_BYTES_PER_S)


class TaskCalls:
    """Activity calls for one task."""

    def __init__(self, task: TaskInput) -> None:
        self.task = task

    def review_input(self, job: JobSpec, *, diagnostic: bool = False) -> ReviewInput:
        """What the review panel sees for ``job``.

        A ``diagnostic`` script promises no result, so the task's checks and acceptance
        criteria are not held against it; every safety and resource rule still is.
        """
        decision = self.task.decision
        return ReviewInput(
            task_id=decision.task_id,
            action=(f"diagnostic script (prints facts, produces no result) for: "
                    f"{decision.action}" if diagnostic else decision.action),
            acceptance_criteria=[] if diagnostic else decision.acceptance_criteria,
            checks=[] if diagnostic else decision.checks, job=job, diagnostic=diagnostic,
            input_names=[i.name for i in decision.resolved_inputs],
            inputs=[InputDigest(name=i.name, sha256=i.sha256, size=i.size)
                    for i in decision.resolved_inputs],
            dependency_artifacts=[f"deps/{a.task_id}/{a.name}"
                                  for a in self.task.dependency_artifacts],
            policy=self.task.policy.review)

    async def review(self, job: JobSpec, *, diagnostic: bool = False) -> list[ReviewVerdict]:
        """The three reviewers, in parallel."""
        req = self.review_input(job, diagnostic=diagnostic)
        what = "diagnostic script" if diagnostic else job.filename or "job"
        return list(await asyncio.gather(
            *(reviewer.run(req, queues=self.task.queues,
                           summary=f"Task {req.task_id} · {reviewer.name} reviews {what}")
              for reviewer in REVIEWERS)))

    @property
    def heartbeat(self) -> timedelta:
        """The heartbeat timeout of the sandbox's long activities (the run's policy)."""
        return timedelta(seconds=self.task.policy.heartbeat_timeout_s)

    async def prepare(self, asked: PrepareEnvironmentInput) -> PreparedEnvironment:
        """Resolve and provision an environment on the sandbox pool (heartbeating)."""
        return await PREPARE_ENVIRONMENT.run(
            asked, queues=self.task.queues, heartbeat=self.heartbeat,
            summary=f"Task {self.task.decision.task_id} · prepare environment "
                    f"{asked.environment or 'for its requirements'}")

    async def execute(self, job: JobSpec, attempt: int, *, label: str | None = None,
                      environment: PreparedEnvironment | None = None) -> ExecutionOutcome:
        """Run the job in the sandbox (heartbeating, so a lost worker is noticed quickly).

        ``label`` runs it in a working directory of its own (``<task>.<label>``), as the
        diagnostic debugger's scripts do.
        """
        decision = self.task.decision
        task_id = f"{self.task.scope()}.{label}" if label else self.task.scope()
        return await EXECUTE_JOB.run(
            ExecuteJobInput(run_id=self.task.run_id, task_id=task_id, attempt=attempt,
                            job=job, inputs=decision.resolved_inputs,
                            dependency_artifacts=self.task.dependency_artifacts,
                            environment=environment),
            queues=self.task.queues,
            start_to_close=timedelta(seconds=job.resources.timeout_s) + JOB_GRACE,
            heartbeat=self.heartbeat, summary=job_summary(task_id, job.filename, attempt))

    async def environment(self) -> EnvironmentFacts:
        """The job interpreter's Python version and installed distributions."""
        return await PROBE_ENVIRONMENT.run(
            None, queues=self.task.queues, heartbeat=self.heartbeat,
            summary=f"Task {self.task.decision.task_id} · probe the job environment")

    async def verify(self, job: JobSpec, outcome: ExecutionOutcome) -> Verification:
        """Check the evidence where the sandbox left it (heartbeating)."""
        return await VERIFY_EVIDENCE.run(
            VerifyEvidenceInput(task_id=self.task.scope(), job=job,
                                checks=self.task.decision.checks, outcome=outcome),
            queues=self.task.queues, start_to_close=evidence_timeout(outcome),
            heartbeat=self.heartbeat,
            summary=f"Task {self.task.decision.task_id} · verify the evidence of "
                    f"{job.filename or 'the job'}")

    async def rescan(self, job: JobSpec, outcome: ExecutionOutcome) -> RescanResult:
        """Re-scan the working directory and re-link misplaced evidence (no re-execution)."""
        return await RESCAN_ARTIFACTS.run(
            RescanInput(task_id=self.task.scope(), job=job, outcome=outcome,
                        input_names=[i.name for i in self.task.decision.resolved_inputs]),
            queues=self.task.queues, heartbeat=self.heartbeat,
            summary=f"Task {self.task.decision.task_id} · re-scan the working directory")
