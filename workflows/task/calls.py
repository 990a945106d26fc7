"""The activity calls of a TaskWorkflow, each with its queue, timeouts and retry policy.

Kept apart from the state machine in ``task.py`` so that file reads as the pipeline and this
one as the list of side effects it may cause.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from workflows.agents.roles import PROBE_ENVIRONMENT, EnvironmentFacts
    from workflows.contracts.execution import (
        ExecuteJobInput,
        ExecutionOutcome,
        Verification,
        VerifyEvidenceInput,
    )
    from workflows.contracts.executive import (
        DiagnoseInput,
        ReflectionNote,
        RescanInput,
        RescanResult,
        ReviewInput,
        ReviewVerdict,
    )
    from workflows.contracts.memory import REMEMBER_TASK, RememberAnswer, RememberInput
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import TaskInput

EXECUTE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3,
                            non_retryable_error_types=["InvalidJob", "InputChanged",
                                                       "SandboxUnavailable"])
QUICK_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)
REFLECT_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=2)
REVIEWERS = {"review_ops": "agents", "review_quality_safety": "agents",
             "review_infrastructure": "sandbox"}
"""Each reviewer activity and the pool it runs on (infrastructure probes the job machine)."""


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
            dependency_artifacts=[f"deps/{a.task_id}/{a.name}"
                                  for a in self.task.dependency_artifacts],
            policy=self.task.policy.review)

    async def review(self, job: JobSpec, *, diagnostic: bool = False) -> list[ReviewVerdict]:
        """The three reviewers, in parallel."""
        queues = self.task.queues
        req = self.review_input(job, diagnostic=diagnostic)
        calls = [
            workflow.execute_activity(
                name, req, result_type=ReviewVerdict,
                task_queue=queues.agents if pool == "agents" else queues.sandbox,
                start_to_close_timeout=timedelta(seconds=60), retry_policy=QUICK_RETRY)
            for name, pool in REVIEWERS.items()
        ]
        return list(await asyncio.gather(*calls))

    async def execute(self, job: JobSpec, attempt: int, *,
                      label: str | None = None) -> ExecutionOutcome:
        """Run the job in the sandbox (heartbeating, so a lost worker is noticed quickly).

        ``label`` runs it in a working directory of its own (``<task>.<label>``), as the
        diagnostic debugger's scripts do.
        """
        decision = self.task.decision
        task_id = f"{decision.task_id}.{label}" if label else decision.task_id
        return await workflow.execute_activity(
            "execute_job",
            ExecuteJobInput(run_id=self.task.run_id, task_id=task_id, attempt=attempt,
                            job=job, inputs=decision.resolved_inputs,
                            dependency_artifacts=self.task.dependency_artifacts),
            result_type=ExecutionOutcome, task_queue=self.task.queues.sandbox,
            start_to_close_timeout=timedelta(seconds=job.resources.timeout_s + 120),
            heartbeat_timeout=timedelta(seconds=self.task.policy.heartbeat_timeout_s),
            retry_policy=EXECUTE_RETRY)

    async def environment(self) -> EnvironmentFacts:
        """The job interpreter's Python version and installed distributions."""
        return await workflow.execute_activity(
            PROBE_ENVIRONMENT, result_type=EnvironmentFacts, task_queue=self.task.queues.sandbox,
            start_to_close_timeout=timedelta(seconds=60), retry_policy=QUICK_RETRY)

    async def verify(self, job: JobSpec, outcome: ExecutionOutcome) -> Verification:
        """Check the evidence where the sandbox left it."""
        return await workflow.execute_activity(
            "verify_evidence",
            VerifyEvidenceInput(task_id=self.task.decision.task_id, job=job,
                                checks=self.task.decision.checks, outcome=outcome),
            result_type=Verification, task_queue=self.task.queues.sandbox,
            start_to_close_timeout=timedelta(minutes=5), retry_policy=QUICK_RETRY)

    async def reflect(self, req: DiagnoseInput) -> ReflectionNote:
        """Ask reflection for a diagnosis; bounded tightly so it never holds a task up."""
        limit = timedelta(seconds=self.task.policy.reflection_timeout_s)
        return await workflow.execute_activity(
            "diagnose_failure", req, result_type=ReflectionNote,
            task_queue=self.task.queues.reflection, schedule_to_close_timeout=limit,
            start_to_close_timeout=min(limit, timedelta(seconds=5)), retry_policy=REFLECT_RETRY)

    async def remember(self, req: RememberInput) -> RememberAnswer:
        """Hand the finished task to memory; bounded like reflection, never holding it up."""
        limit = timedelta(seconds=self.task.policy.reflection_timeout_s)
        return await workflow.execute_activity(
            REMEMBER_TASK, req, result_type=RememberAnswer,
            task_queue=self.task.queues.reflection, schedule_to_close_timeout=limit,
            start_to_close_timeout=min(limit, timedelta(seconds=10)), retry_policy=REFLECT_RETRY)

    async def rescan(self, job: JobSpec, outcome: ExecutionOutcome) -> RescanResult:
        """Re-scan the working directory and re-link misplaced evidence (no re-execution)."""
        return await workflow.execute_activity(
            "rescan_artifacts",
            RescanInput(task_id=self.task.decision.task_id, job=job, outcome=outcome,
                        input_names=[i.name for i in self.task.decision.resolved_inputs]),
            result_type=RescanResult, task_queue=self.task.queues.sandbox,
            start_to_close_timeout=timedelta(minutes=2), retry_policy=QUICK_RETRY)
