"""The review step of a TaskWorkflow: the panel's verdicts on a job before anything runs.

Deterministic first: the three reviewers' own checks always run, and a model reviewer (when
the policy turns them on) can only add its judgement to a verdict, never take a finding away.
A panel that cannot review at all ends the task with :class:`Finish`.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.roles import ModelReviewRequest
    from workflows.catalogue import REVIEW_JOB_MODEL
    from workflows.common.failures import root_message
    from workflows.contracts.executive import Finding, ReviewVerdict, merge_verdicts
    from workflows.contracts.plan import JobSpec
    from workflows.task.calls import TaskCalls
    from workflows.task.phases import Phase
    from workflows.task.state import Finish, TaskState


class Review:
    """The review panel for one task's jobs.

    Args:
        state: the task's state (attempts, events, snapshots).
        calls: the task's activity calls (the three reviewers).
        agents: the task's role calls (the model reviewers).
    """

    def __init__(self, state: TaskState, calls: TaskCalls, agents: AgentCalls) -> None:
        self.state = state
        self.calls = calls
        self.agents = agents

    async def panel(self, job: JobSpec) -> list[ReviewVerdict]:
        """The panel's verdicts on ``job``, recorded as events and as the review snapshot."""
        state = self.state
        state.bump(Phase.REVIEW)
        try:
            verdicts = await self.calls.review(job)
        except ActivityError as err:
            raise Finish("failed", f"the review panel could not review the job: "
                                   f"{root_message(err)}") from err
        verdicts = await self._with_model_reviews(job, verdicts)
        for v in verdicts:
            state.log.add("agent_call", "complete", agent=v.reviewer, status=v.verdict,
                          outputs={"confidence": v.confidence,
                                   "critical": [f.message for f in v.critical],
                                   "warnings": [f.message for f in v.warnings][:20],
                                   "reasoning": v.reasoning})
        state.snapshot(Phase.REVIEW, {"verdicts": [v.model_dump(mode="json") for v in verdicts]})
        return verdicts

    async def _with_model_reviews(self, job: JobSpec,
                                  verdicts: list[ReviewVerdict]) -> list[ReviewVerdict]:
        """Each deterministic verdict with its model reviewer's judgement added."""
        task = self.state.task
        if not (self.agents.enabled and task.policy.agents.model_review):
            return verdicts
        await self.state.log.flush()  # model calls take seconds: events first
        review = self.calls.review_input(job)

        async def one(verdict: ReviewVerdict) -> ReviewVerdict:
            req = ModelReviewRequest(run_id=task.run_id, task_id=task.decision.task_id,
                                     reviewer=verdict.reviewer, review=review,
                                     deterministic=verdict)
            try:
                answer = await self.agents.call(REVIEW_JOB_MODEL, req,
                                                role=f"reviewer_{verdict.reviewer}")
            except AgentUnavailable as err:
                return verdict.model_copy(update={"warnings": [*verdict.warnings, Finding(
                    code="model.unavailable", severity="info",
                    message=f"no model review: {err.reason}")]})
            return merge_verdicts(verdict, answer.verdict)

        return list(await asyncio.gather(*(one(v) for v in verdicts)))


def describe_rejection(verdicts: list[ReviewVerdict]) -> str:
    """Who rejected and why, from the critical findings (field logic, no text matching)."""
    parts = [f"{v.reviewer}: " + "; ".join(
        f"{f.message}" + (f" (line {f.line})" if f.line else "") for f in v.critical)
        if v.critical else f"{v.reviewer}: {v.reasoning}"
        for v in verdicts if v.verdict == "REJECT" or v.critical]
    return " | ".join(parts) or "the panel did not approve"
