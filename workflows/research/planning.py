"""How a goal run gets its plan: the planner and plan reviewer, or a person, or no plan.

The planner drafts a plan; a draft that fails validation goes back with the problems, and the
plan reviewer may send it back with concerns, for at most ``plan_review_rounds`` rounds. When
no model can plan (none configured, budget spent, no acceptable draft), the run waits for a
person's plan (``assay plan RUN FILE``) or ends deferred, as the agents policy says. It never
invents a plan. Before any task runs, the plan gate asks a person when the policy says so.

Every planner request carries what memory recalls for the goal (asked once, before the first)
and, for a study's cycle, the study's context; the draft's hypotheses and links are checked
against the study's tree like the rest of the plan. The earlier cycles' tasks a drafted plan
reuses are resolved here into their verified artifacts (``ResearchInput.earlier``); one that
cannot be goes back to the planner like any other problem of the draft.
"""

from __future__ import annotations

import re
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.planning import plan_from_draft
    from workflows.agents.roles import PlanDraftOutput, PlanRequest, PlanReviewRequest
    from workflows.catalogue import PLAN_GOAL, RESOLVE_REUSE, REVIEW_PLAN
    from workflows.common.bounds import PayloadRefused, clip, read_json
    from workflows.common.errors import ErrorType
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper
    from workflows.common.validation import field_errors
    from workflows.common.words import plural
    from workflows.contracts.cycles import ResolveReuseInput
    from workflows.contracts.executive import BY_CHARS
    from workflows.contracts.plan import Plan, PlanError, check_graph
    from workflows.contracts.results import PlanSource, SuppliedPlan, TaskResult
    from workflows.research.memory import recall_notes, recalls
    from workflows.research.state import RunState

SUPPLIED_PLAN_MAX_BYTES = 1_500_000
"""The largest plan ``supply_plan`` reads: the default limit on a run's input
(``max_plan_bytes``); a larger one is refused unread."""
PLAN_NAME_CHARS = 200
"""The longest name a supplied plan may have."""
_SHA256 = re.compile(r"[0-9a-f]{64}")
PLANNING_PHASES = ("intake", "match", "plan")
"""Phases in which a goal run may yet come to wait for a person's plan."""


class PlanRefused(ValueError):
    """A supplied plan the run cannot take (not waiting for one, or invalid)."""


def read_supplied(raw: RawValue) -> SuppliedPlan:
    """``supply_plan``'s raw argument as a supplied plan: its size is checked first.

    Raises:
        PlanRefused: too large, malformed, or with a name or author too long to keep.
    """
    try:
        payload = read_json(raw, limit=SUPPLIED_PLAN_MAX_BYTES, what="plan",
                            hint=" (keep data in `inputs` files rather than inline `code`, or "
                                 "split the plan)")
    except PayloadRefused as err:
        raise PlanRefused(str(err)) from None
    try:
        supplied = SuppliedPlan.model_validate(payload)
    except ValidationError as err:
        problems = "; ".join(clip(str(e), 200) for e in field_errors(err, whole="payload",
                                                                     most=5))
        raise PlanRefused(f"invalid plan: {problems}") from None
    if len(supplied.by) > BY_CHARS:
        raise PlanRefused(f"by: give a name of at most {BY_CHARS} characters")
    if len(supplied.plan_name) > PLAN_NAME_CHARS:
        raise PlanRefused(f"plan_name: at most {PLAN_NAME_CHARS} characters")
    if not _SHA256.fullmatch(supplied.plan_sha256):
        raise PlanRefused("plan_sha256: give the plan's sha256 (64 lowercase hex digits)")
    return supplied


def sound_supplied(raw: RawValue) -> SuppliedPlan:
    """A supplied plan read (:func:`read_supplied`) whose task graph is sound.

    Raises:
        PlanRefused: too large, malformed, or with an invalid graph (the message says how).
    """
    supplied = read_supplied(raw)
    try:
        check_graph(supplied.plan)
    except PlanError as err:
        raise PlanRefused(f"invalid plan: {clip(str(err), 2000)}") from None
    return supplied


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
        self.notes: list[str] | None = None
        """What memory recalled for the planner (asked once per run)."""

    def check_supplied(self, raw: RawValue) -> None:
        """Refuse a supplied plan unless the run waits for one and the plan is sound.

        Raises:
            ApplicationError: ``PlanRefused``, non-retryable (the same plan is refused again).
        """
        try:
            if not self.awaiting and (never := self._never_waits()):
                raise PlanRefused(never)
            sound_supplied(raw)
        except PlanRefused as err:
            raise ApplicationError(str(err), type=ErrorType.PLAN_REFUSED,
                                   non_retryable=True) from None

    def _never_waits(self) -> str:
        """Why this run will never wait for a person's plan; empty while it still may."""
        req = self.state.req
        if req.plan is not None:
            return "this run is not waiting for a plan: it was started with a plan"
        if self.state.phase not in PLANNING_PHASES:
            return ("this run is not waiting for a plan: it has one, or has ended (see "
                    f"`assay status {req.run_id}`)")
        if not req.policy.agents.enabled and req.policy.agents.no_model != "wait":
            return ("this run is not waiting for a plan and never will: it has no model to "
                    "plan with and will end deferred; start it with `--no-model wait` to give "
                    "it one")
        return ""

    async def until_awaiting(self) -> None:
        """Wait while the run starts or plans, until it awaits a person's plan.

        Raises:
            ApplicationError: ``PlanRefused``, non-retryable, when the run got its plan
                elsewhere or ended without waiting for one.
        """
        await workflow.wait_condition(lambda: self.awaiting or bool(self._never_waits()))
        if not self.awaiting:
            why = self._never_waits() or ("this run is not waiting for a plan: another plan "
                                          "sent at the same time was taken")
            raise ApplicationError(why, type=ErrorType.PLAN_REFUSED, non_retryable=True)

    def take_supplied(self, raw: RawValue) -> None:
        """Take a person's plan (checked by :meth:`check_supplied`); the run goes on.

        Only decoded here: the checks are the validator's, which a replay does not run, and
        a plan accepted before a check was added must replay as it was taken.
        """
        supplied = SuppliedPlan.model_validate(workflow.payload_converter().from_payload(
            raw.payload))
        self.supplied = supplied
        self.state.supplied_plan = PlanSource(sha256=supplied.plan_sha256, by=supplied.by,
                                              name=supplied.plan_name)
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
        if supplied is None and self.state.cancelling:
            return None, f"deferred: {reason}; the run was cancelled while it waited for a plan"
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
        memory = await self._memory_notes()
        tree = req.study.tree if req.study is not None else None
        reusable = req.study.reusable() if req.study is not None else {}
        for n in range(1, rounds + 2):
            answer = await self.agents.call(
                PLAN_GOAL, PlanRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                       memory=memory, previous=previous, feedback=feedback,
                                       study=req.study,
                                       guidelines=self.state.skills.guidelines.get("goal", [])),
                role="planner")
            if answer.guidelines:
                self.state.skills.guided["planner"] = list(answer.guidelines)
            previous = answer.draft
            try:
                plan = plan_from_draft(answer.draft, req.data, name=req.plan_name, tree=tree,
                                       reusable=reusable)
                await self._resolve_reuse(plan)
            except PlanError as err:
                feedback = [f"the plan is invalid: {line}" for line in str(err).splitlines()]
                log.add("agent_call", "info", agent="planner", status="invalid_plan",
                        outputs={"round": n, "problems": feedback})
                continue
            if rounds == 0:
                return plan
            review = await self.agents.call(
                REVIEW_PLAN, PlanReviewRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                                               draft=answer.draft, study=req.study),
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

    async def _resolve_reuse(self, plan: Plan) -> None:
        """Resolve the earlier cycles' tasks ``plan`` reuses into the run's ``earlier``.

        Raises:
            PlanError: a reference the study's reports cannot resolve (say, a report that
                cannot be read on this host).
        """
        req = self.state.req
        have = {a.task_id for a in req.earlier}
        refs = sorted({ref for d in plan.decisions for ref in d.reuse} - have)
        if not refs or req.study is None:
            return
        reports = {s.cycle: s.results_json for s in req.study.previous if s.results_json}
        digests = {s.cycle: s.results_sha256 for s in req.study.previous if s.results_sha256}
        try:
            found = await RESOLVE_REUSE.run(ResolveReuseInput(refs=refs, reports=reports,
                                                              digests=digests))
        except (ActivityError, ApplicationError) as err:
            raise PlanError(root_message(err)) from None
        self.state.req = req.model_copy(update={"earlier": [*req.earlier, *found]})
        self.state.log.add("checkpoint", "info", agent="planner", status="reuse_resolved",
                           outputs={"reuse": refs, "artifacts": len(found)})

    async def _memory_notes(self) -> list[str]:
        """What memory recalls for the goal: asked once, before the first planner request."""
        if self.notes is None:
            self.notes = []
            req = self.state.req
            if recalls(req, can_plan=self.agents.enabled):
                self.notes = await recall_notes(req, self.state.log)
        return self.notes

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
                lambda: self.supplied is not None or state.cancelling,
                timeout=timedelta(seconds=state.req.policy.gates.plan.timeout_s))
        except TimeoutError:
            self.awaiting = False
        if self.supplied is None:
            self.awaiting = False  # timed out, or the run was cancelled
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
                                            f"({plural(len(order), 'task')})?")
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
