"""How a goal run gets its plan: the planner and plan reviewer, or a person, or no plan.

The planner drafts a plan; a draft that fails validation goes back with the problems, and the
plan reviewer may send it back with concerns, for at most ``plan_review_rounds`` rounds. When
no model can plan (none configured, budget spent, no acceptable draft), the run waits for a
person's plan (``assay plan RUN FILE``) or ends deferred, as the agents policy says. It never
invents a plan.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.planning import plan_from_draft
    from workflows.agents.roles import (
        PLAN_GOAL,
        REVIEW_PLAN,
        PlanAnswer,
        PlanDraftOutput,
        PlanRequest,
        PlanReviewAnswer,
        PlanReviewRequest,
    )
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.constants import STATUS_KEY
    from workflows.contracts.plan import Plan, PlanError, check_graph
    from workflows.contracts.results import ResearchInput, RunStatus, SuppliedPlan


class PlanRefused(ValueError):
    """A supplied plan the run cannot take (not waiting for one, or invalid)."""


class RunPlanning:
    """The planning steps of a ResearchWorkflow."""

    log: EventLog
    agents: AgentCalls
    _status: RunStatus

    def __init__(self) -> None:
        self._awaiting_plan = False
        self._supplied: SuppliedPlan | None = None

    def _check_supplied(self, supplied: SuppliedPlan) -> None:
        """Refuse a supplied plan unless the run waits for one and the plan is sound."""
        if not self._awaiting_plan:
            raise PlanRefused("this run is not waiting for a plan (it has one, or is still "
                              "planning, or has ended)")
        try:
            check_graph(supplied.plan)
        except PlanError as err:
            raise PlanRefused(f"invalid plan: {err}") from err

    def _take_supplied(self, supplied: SuppliedPlan) -> None:
        self._supplied = supplied
        self._awaiting_plan = False
        self._status = "running"
        self.log.add("checkpoint", "info", agent=f"person:{supplied.by or 'unknown'}",
                     status="plan_supplied",
                     inputs={"plan": supplied.plan_name, "plan_sha256": supplied.plan_sha256,
                             "tasks": len(supplied.plan.decisions)})

    async def _plan_goal(self, req: ResearchInput) -> tuple[Plan | None, str]:
        """The goal's plan, or None and why there is none."""
        try:
            return await self._draft_and_review(req), ""
        except AgentUnavailable as err:
            reason = err.reason
        self.log.add("checkpoint", "info", agent="planner", status="no_plan",
                     outputs={"reason": reason})
        if req.policy.agents.no_model != "wait":
            return None, f"deferred: {reason}"
        supplied = await self._wait_for_plan(req, reason)
        if supplied is None:
            return None, (f"deferred: {reason}; no plan was supplied within "
                          f"{req.policy.gates.plan.timeout_s:g} s")
        return supplied.plan, ""

    async def _draft_and_review(self, req: ResearchInput) -> Plan:
        assert req.goal is not None
        rounds = req.policy.agents.plan_review_rounds
        previous: PlanDraftOutput | None = None
        feedback: list[str] = []
        for n in range(1, rounds + 2):
            answer = await self.agents.call(
                PLAN_GOAL, PlanRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                       previous=previous, feedback=feedback),
                PlanAnswer, role="planner")
            previous = answer.draft
            try:
                plan = plan_from_draft(answer.draft, req.data, name=req.plan_name)
            except PlanError as err:
                feedback = [f"the plan is invalid: {line}" for line in str(err).splitlines()]
                self.log.add("agent_call", "info", agent="planner", status="invalid_plan",
                             outputs={"round": n, "problems": feedback})
                continue
            if rounds == 0:
                return plan
            review = await self.agents.call(
                REVIEW_PLAN, PlanReviewRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                               draft=answer.draft),
                PlanReviewAnswer, role="plan_reviewer")
            self.log.add("agent_call", "info", agent="plan_reviewer",
                         status=review.review.verdict,
                         outputs={"round": n, "concerns": review.review.concerns,
                                  "reasoning": review.review.reasoning})
            if review.review.verdict == "APPROVE":
                return plan
            feedback = review.review.concerns or [review.review.reasoning
                                                  or "the plan reviewer rejected the plan"]
        raise AgentUnavailable(f"no acceptable plan after {rounds + 1} drafts: "
                               + "; ".join(feedback))

    async def _wait_for_plan(self, req: ResearchInput, reason: str) -> SuppliedPlan | None:
        """Wait (status ``waiting``) for ``assay plan RUN FILE``; None on timeout."""
        self._awaiting_plan = True
        self._status = "waiting"
        upsert_keywords(**{STATUS_KEY.name: "waiting"})
        self.log.add("checkpoint", "info", status="awaiting_plan",
                     outputs={"reason": reason,
                              "how": "supply a plan with `assay plan RUN FILE`"})
        await self.log.flush()
        try:
            await workflow.wait_condition(
                lambda: self._supplied is not None,
                timeout=timedelta(seconds=req.policy.gates.plan.timeout_s))
        except TimeoutError:
            self._awaiting_plan = False
        self._status = "running"
        upsert_keywords(**{STATUS_KEY.name: "running"})
        return self._supplied
