"""How a goal run gets its plan: the planner and plan reviewer, or a person, or no plan.

The planner drafts a plan; a draft that fails validation goes back with the problems, and the
plan reviewer may send it back with concerns, for at most ``plan_review_rounds`` rounds. When
no model can plan (none configured, budget spent, no acceptable draft), the run waits for a
person's plan (``assay plan RUN FILE``) or ends deferred, as the agents policy says. It never
invents a plan. Before any task runs, the plan gate asks a person when the policy says so.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.planning import plan_from_draft
    from workflows.agents.roles import PlanDraftOutput, PlanRequest, PlanReviewRequest
    from workflows.catalogue import PLAN_GOAL, REVIEW_PLAN
    from workflows.common.gates import GateKeeper
    from workflows.contracts.plan import Plan, PlanError, check_graph
    from workflows.contracts.results import SuppliedPlan, TaskResult
    from workflows.research.state import RunState


class PlanRefused(ValueError):
    """A supplied plan the run cannot take (not waiting for one, or invalid)."""


class Planning:
    """How one run gets its plan, and the plan gate.

    Args:
        state: the run's state (its input, events, status and tasks).
        agents: the run's role calls (planner, plan reviewer).
        gates: the run's gates (the plan gate).
    """

    def __init__(self, state: RunState, agents: AgentCalls, gates: GateKeeper) -> None:
        self.state = state
        self.agents = agents
        self.gates = gates
        self.awaiting = False
        self.supplied: SuppliedPlan | None = None

    def check_supplied(self, supplied: SuppliedPlan) -> None:
        """Refuse a supplied plan unless the run waits for one and the plan is sound."""
        if not self.awaiting:
            raise PlanRefused("this run is not waiting for a plan (it has one, or is still "
                              "planning, or has ended)")
        try:
            check_graph(supplied.plan)
        except PlanError as err:
            raise PlanRefused(f"invalid plan: {err}") from err

    def take_supplied(self, supplied: SuppliedPlan) -> None:
        """Take a person's plan (checked by :meth:`check_supplied`); the run goes on."""
        self.supplied = supplied
        self.awaiting = False
        self.state.status = "running"
        self.state.log.add("checkpoint", "info", agent=f"person:{supplied.by or 'unknown'}",
                           status="plan_supplied",
                           inputs={"plan": supplied.plan_name,
                                   "plan_sha256": supplied.plan_sha256,
                                   "tasks": len(supplied.plan.decisions)})

    async def plan_goal(self) -> tuple[Plan | None, str]:
        """The goal's plan, or None and why there is none."""
        req, log = self.state.req, self.state.log
        try:
            return await self._draft_and_review(), ""
        except AgentUnavailable as err:
            reason = err.reason
        log.add("checkpoint", "info", agent="planner", status="no_plan",
                outputs={"reason": reason})
        if req.policy.agents.no_model != "wait":
            return None, f"deferred: {reason}"
        supplied = await self._wait_for_plan(reason)
        if supplied is None:
            return None, (f"deferred: {reason}; no plan was supplied within "
                          f"{req.policy.gates.plan.timeout_s:g} s")
        return supplied.plan, ""

    async def _draft_and_review(self) -> Plan:
        req, log = self.state.req, self.state.log
        assert req.goal is not None
        rounds = req.policy.agents.plan_review_rounds
        previous: PlanDraftOutput | None = None
        feedback: list[str] = []
        for n in range(1, rounds + 2):
            answer = await self.agents.call(
                PLAN_GOAL, PlanRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                       previous=previous, feedback=feedback),
                role="planner")
            previous = answer.draft
            try:
                plan = plan_from_draft(answer.draft, req.data, name=req.plan_name)
            except PlanError as err:
                feedback = [f"the plan is invalid: {line}" for line in str(err).splitlines()]
                log.add("agent_call", "info", agent="planner", status="invalid_plan",
                        outputs={"round": n, "problems": feedback})
                continue
            if rounds == 0:
                return plan
            review = await self.agents.call(
                REVIEW_PLAN, PlanReviewRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                               draft=answer.draft),
                role="plan_reviewer")
            log.add("agent_call", "info", agent="plan_reviewer", status=review.review.verdict,
                    outputs={"round": n, "concerns": review.review.concerns,
                             "reasoning": review.review.reasoning})
            if review.review.verdict == "APPROVE":
                return plan
            feedback = review.review.concerns or [review.review.reasoning
                                                  or "the plan reviewer rejected the plan"]
        raise AgentUnavailable(f"no acceptable plan after {rounds + 1} drafts: "
                               + "; ".join(feedback))

    async def _wait_for_plan(self, reason: str) -> SuppliedPlan | None:
        """Wait (status ``waiting``) for ``assay plan RUN FILE``; None on timeout."""
        state = self.state
        self.awaiting = True
        state.set_status("waiting")
        state.log.add("checkpoint", "info", status="awaiting_plan",
                      outputs={"reason": reason,
                               "how": "supply a plan with `assay plan RUN FILE`"})
        await state.log.flush()
        try:
            await workflow.wait_condition(
                lambda: self.supplied is not None,
                timeout=timedelta(seconds=state.req.policy.gates.plan.timeout_s))
        except TimeoutError:
            self.awaiting = False
        state.set_status("running")
        return self.supplied

    async def approved(self, plan: Plan, order: list[str]) -> bool:
        """The plan gate: automatic unless policy makes it human; a rejection cancels all."""
        state = self.state
        if not self.gates.needs_person("plan"):
            return True
        state.set_phase("plan_gate")
        state.set_status("waiting")
        gate = await self.gates.ask("plan", f"run plan {state.req.plan_name} "
                                            f"({len(order)} tasks)?")
        state.set_status("running")
        if self.gates.approved(gate):
            return True
        reason = f"plan gate {gate.status} by {gate.by}" + (f": {gate.comment}"
                                                            if gate.comment else "")
        for decision in plan.decisions:
            state.states[decision.task_id] = "cancelled"
            state.results[decision.task_id] = TaskResult(
                task_id=decision.task_id, priority=decision.priority, action=decision.action,
                status="cancelled", status_reason=reason)
        return False
