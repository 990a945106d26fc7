"""The steps of a TaskWorkflow that touch the world: review, execute, verify.

Each records its events, bumps its phase's attempts and keeps a snapshot; a step that cannot
be done at all ends the task with :class:`Finish` and the reason.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentUnavailable
    from workflows.agents.roles import REVIEW_JOB_MODEL, ModelReviewAnswer, ModelReviewRequest
    from workflows.common.failures import root_message
    from workflows.contracts.execution import ExecutionOutcome, Verification
    from workflows.contracts.executive import Finding, ReviewVerdict, merge_verdicts
    from workflows.contracts.plan import JobSpec
    from workflows.task.phases import Phase
    from workflows.task.recovery import TaskRecovery
    from workflows.task.state import Finish


class TaskSteps(TaskRecovery):
    """Review, execution and verification of one job."""

    async def _review(self, job: JobSpec) -> list[ReviewVerdict]:
        self._bump(Phase.REVIEW)
        await self.log.flush()
        try:
            verdicts = await self.calls.review(job)
        except ActivityError as err:
            raise Finish("failed", f"the review panel could not review the job: "
                                   f"{root_message(err)}") from err
        verdicts = await self._with_model_reviews(job, verdicts)
        for v in verdicts:
            self.log.add("agent_call", "complete", agent=v.reviewer, status=v.verdict,
                         outputs={"confidence": v.confidence,
                                  "critical": [f.message for f in v.critical],
                                  "warnings": [f.message for f in v.warnings][:20],
                                  "reasoning": v.reasoning})
        self._snapshot(Phase.REVIEW, {"verdicts": [v.model_dump(mode="json") for v in verdicts]})
        return verdicts

    async def _execute(self, job: JobSpec) -> ExecutionOutcome:
        self._bump(Phase.EXECUTE)
        attempt = self.attempts[Phase.EXECUTE]
        start_id = self.log.add("code_exec", "start", agent="sandbox",
                                inputs={"filename": job.filename, "args": job.args,
                                        "resources": job.resources.model_dump()})
        await self.log.flush()
        try:
            outcome = await self.calls.execute(job, attempt)
        except ActivityError as err:
            reason = f"the sandbox could not run the job: {root_message(err)}"
            self.log.add("error", "error", agent="sandbox", status="failed",
                         outputs={"reason": reason})
            raise Finish("failed", reason) from err
        ok = outcome.outcome == "succeeded"
        self.log.add("code_exec", "complete" if ok else "error", agent="sandbox",
                     status=outcome.outcome, duration_ms=int(outcome.duration_s * 1000),
                     outputs={"exit_code": outcome.exit_code, "reason": outcome.reason,
                              "peak_memory_mb": outcome.peak_memory_mb,
                              "stdout_tail": outcome.stdout_tail[-2000:],
                              "stderr_tail": outcome.stderr_tail[-2000:],
                              "isolation": outcome.isolation,
                              "environment": outcome.environment},
                     meta={"start_event_id": start_id})
        for artifact in outcome.artifacts:
            self.log.add("file_gen", "complete", agent="sandbox", status="created",
                         outputs={"name": artifact.name, "size": artifact.size,
                                  "sha256": artifact.sha256})
        self._snapshot(Phase.EXECUTE, outcome.model_dump(mode="json"))
        return outcome

    async def _verify(self, job: JobSpec, outcome: ExecutionOutcome) -> Verification:
        self._bump(Phase.VERIFY)
        try:
            verification = await self.calls.verify(job, outcome)
        except ActivityError as err:
            raise Finish("failed", f"the evidence could not be checked: "
                                   f"{root_message(err)}") from err
        self.log.add("tool_call", "complete" if verification.passed else "error",
                     agent="verifier", status="pass" if verification.passed else "fail",
                     outputs={"summary": verification.summary, "missing": verification.missing})
        self._snapshot(Phase.VERIFY, verification.model_dump(mode="json"))
        return verification

    async def _with_model_reviews(self, job: JobSpec,
                                  verdicts: list[ReviewVerdict]) -> list[ReviewVerdict]:
        """Each deterministic verdict with its model reviewer's judgement added."""
        if not (self.agents.enabled and self.task.policy.agents.model_review):
            return verdicts
        review = self.calls.review_input(job)

        async def one(verdict: ReviewVerdict) -> ReviewVerdict:
            req = ModelReviewRequest(run_id=self.task.run_id,
                                     task_id=self.task.decision.task_id,
                                     reviewer=verdict.reviewer, review=review,
                                     deterministic=verdict)
            try:
                answer = await self.agents.call(REVIEW_JOB_MODEL, req, ModelReviewAnswer,
                                                role=f"reviewer_{verdict.reviewer}")
            except AgentUnavailable as err:
                return verdict.model_copy(update={"warnings": [*verdict.warnings, Finding(
                    code="model.unavailable", severity="info",
                    message=f"no model review: {err.reason}")]})
            return merge_verdicts(verdict, answer.verdict)

        return list(await asyncio.gather(*(one(v) for v in verdicts)))
