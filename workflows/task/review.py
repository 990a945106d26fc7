"""The review step of a TaskWorkflow: the panel's verdicts on a job before anything runs.

Deterministic first: the three reviewers' own checks always run, and a model reviewer (when
the policy turns them on) can only add its judgement to a verdict, never take a finding away.
A light task (``workflows.task.tiering``) asks one model reviewer, the code's; escalated to
full, it asks the other two about the same job. A panel that cannot review at all ends the
task with :class:`Finish`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.catalogue import REVIEW_JOB_MODEL
    from workflows.common.failures import root_message
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.roles import DebugFix, EnvironmentFacts, ModelReviewRequest
    from workflows.contracts.verdicts import Finding, ReviewVerdict, merge_verdicts
    from workflows.task.calls import TaskCalls
    from workflows.task.phases import Phase
    from workflows.task.state import Finish, TaskState
    from workflows.task.tiering import LIGHT_REVIEWER


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

    async def panel(self, job: JobSpec, fix: DebugFix | None = None,
                    environment: EnvironmentFacts | None = None) -> list[ReviewVerdict]:
        """The panel's verdicts on ``job``, recorded as events and as the review snapshot.

        ``fix``: the job is a debugger's fix, and the model reviewers are told what it fixes.
        ``environment``: the packages of the environment it runs in, when the caller holds
        them (else the run's environment's, when the job runs there and they are known).
        """
        state = self.state
        state.bump(Phase.REVIEW)
        try:
            verdicts = await self.calls.review(job)
        except ActivityError as err:
            raise Finish("failed", f"the review panel could not review the job: "
                                   f"{root_message(err)}") from err
        light = state.tier == "light"
        verdicts = await self._with_model_reviews(
            job, verdicts, lambda reviewer: not light or reviewer == LIGHT_REVIEWER, fix,
            environment)
        self._record(verdicts)
        return verdicts

    async def escalated(self, job: JobSpec) -> list[ReviewVerdict]:
        """The light panel's verdicts on ``job`` with the other model reviewers' added."""
        verdicts = await self._with_model_reviews(
            job, self.state.verdicts, lambda reviewer: reviewer != LIGHT_REVIEWER)
        self._record(verdicts)
        return verdicts

    def _record(self, verdicts: list[ReviewVerdict]) -> None:
        """The verdicts as events and as the review snapshot."""
        state = self.state
        for v in verdicts:
            state.log.add("agent_call", "complete", agent=v.reviewer, status=v.verdict,
                          outputs={"confidence": v.confidence,
                                   "critical": [f.message for f in v.critical],
                                   "warnings": [f.message for f in v.warnings][:20],
                                   "reasoning": v.reasoning})
        state.snapshot(Phase.REVIEW, {"verdicts": [v.model_dump(mode="json") for v in verdicts]})

    async def _with_model_reviews(self, job: JobSpec, verdicts: list[ReviewVerdict],
                                  asks: Callable[[str], bool],
                                  fix: DebugFix | None = None,
                                  environment: EnvironmentFacts | None = None,
                                  ) -> list[ReviewVerdict]:
        """Each verdict whose reviewer ``asks`` names with its model reviewer's judgement."""
        task = self.state.task
        if not (self.agents.enabled and task.policy.agents.model_review):
            return verdicts
        await self.state.log.flush()  # model calls take seconds: events first
        review = self.calls.review_input(job)
        facts = environment or self._run_facts(job)

        async def one(verdict: ReviewVerdict) -> ReviewVerdict:
            if not asks(verdict.reviewer):
                return verdict
            req = ModelReviewRequest(run_id=task.run_id, task_id=task.decision.task_id,
                                     reviewer=verdict.reviewer, review=review,
                                     deterministic=verdict, fix=fix, environment=facts)
            try:
                answer = await self.agents.call(REVIEW_JOB_MODEL, req,
                                                role=f"reviewer_{verdict.reviewer}")
            except AgentUnavailable as err:
                return verdict.model_copy(update={"warnings": [*verdict.warnings, Finding(
                    code="model.unavailable", severity="info",
                    message=f"no model review: {err.reason}")]})
            return merge_verdicts(verdict, answer.verdict)

        return list(await asyncio.gather(*(one(v) for v in verdicts)))

    def _run_facts(self, job: JobSpec) -> EnvironmentFacts | None:
        """The run's environment's packages, when ``job`` runs there and they are known.

        They are known once prepared for the coder; none is prepared for a review alone.
        """
        run = self.state.task.policy.environment
        return self.state.run_facts if run and job.environment == run else None


def describe_rejection(verdicts: list[ReviewVerdict]) -> str:
    """Who rejected and why, from the critical findings (field logic, no text matching)."""
    parts = [f"{v.reviewer}: " + "; ".join(
        f"{f.message}" + (f" (line {f.line})" if f.line else "") for f in v.critical)
        if v.critical else f"{v.reviewer}: {v.reasoning}"
        for v in verdicts if v.verdict == "REJECT" or v.critical]
    return " | ".join(parts) or "the panel did not approve"
