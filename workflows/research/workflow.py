"""ResearchWorkflow: one run of a plan or a goal, from intake to report.

intake -> [match a skill] -> [plan the goal] -> [plan gate] -> execute -> [summarize]
-> [plan afresh when a skill's plan failed its promise] -> report

The workflow holds its handlers and this pipeline; the steps are plain collaborators given the
run's ``RunState``: ``planning`` (planner, a person's plan, the plan gate), ``tasks`` (the
tasks as child TaskWorkflows), ``skills`` and ``memory`` (the learning pools' advice) and
``report`` (answer, results, report).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TypeVar

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, budget_for
    from workflows.branching.requests import BranchRefusedError
    from workflows.common.details import outcome_text
    from workflows.common.events import upsert_keywords
    from workflows.common.gates import GateKeeper, GateRefusedError
    from workflows.constants import (
        KIND_KEY,
        PARENT_KEY,
        PLAN_KEY,
        STATUS_KEY,
        task_workflow_id,
    )
    from workflows.contracts.branches import (
        BRANCH_MAX_BYTES,
        BranchRequest,
        BranchTree,
        SteerRequest,
    )
    from workflows.contracts.checkpoints import (
        CHECKPOINT_MAX_BYTES,
        Checkpoint,
        CheckpointList,
        CheckpointRequest,
    )
    from workflows.contracts.errors import ErrorType
    from workflows.contracts.gates import GateDecision, GateRecord
    from workflows.contracts.plaintext import clip
    from workflows.contracts.plan import Plan, PlanError, check_graph
    from workflows.contracts.results import (
        ParentLink,
        ResearchInput,
        ResearchResult,
        RunProgress,
    )
    from workflows.research.batches import BatchRunner, unpack_plan
    from workflows.research.checkpoints import CheckpointRefusedError
    from workflows.research.context import unreusable
    from workflows.research.lines import Branches
    from workflows.research.memory import consult_memory
    from workflows.research.planning import Planning
    from workflows.research.report import (
        answer_goal,
        answer_run,
        run_report,
        run_result,
        write_report,
    )
    from workflows.research.skills import plan_from_skill, replan_needed, supply_jobs
    from workflows.research.state import RunState
    from workflows.research.steering import (
        STEER_MAX_BYTES,
        RequestRefusedError,
        Steering,
        read,
        refusal,
    )
    from workflows.research.tasks import TaskRunner


RequestT = TypeVar("RequestT", BranchRequest, SteerRequest, CheckpointRequest)


@workflow.defn
class ResearchWorkflow:
    """Plans a goal or validates a plan, runs its tasks as child workflows, writes the report."""

    @workflow.init
    def __init__(self, req: ResearchInput) -> None:
        self.state = state = RunState(req)
        self.gates = GateKeeper(req.policy.gates, state.log)
        self.agents = AgentCalls(req.policy.agents, req.queues, state.log,
                                 budget_for(req.policy.agents))
        self.planning = Planning(state, self.agents, self.gates)
        self.tasks = TaskRunner(state, self.agents)
        self.tasks.batches = self.batches = BatchRunner(state, self.agents, self.tasks)
        self.branches = Branches(state, self.gates, self.agents)
        self.steering = Steering(state, self.branches)
        self.tasks.on_start, self.tasks.on_finish = self.branches.explore, self.branches.finished

    # --- steering ------------------------------------------------------------------------

    @workflow.query
    def progress(self) -> RunProgress:
        """Run phase, the status of every task and the plan gate if it is waiting."""
        state = self.state
        return RunProgress(run_id=workflow.info().workflow_id, phase=state.phase,
                           status=state.status, tasks=dict(state.states), order=state.order,
                           waiting=self.gates.waiting, approvers=self.gates.approvers,
                           decided=[g for g in self.gates.records if g.status != "waiting"],
                           refused=[*self.gates.refusals(), *self.branches.refused],
                           spent_usd=self.agents.spend.usage.cost_usd,
                           hypotheses=[h.id for h in state.plan.hypotheses] if state.plan
                           else [], batch=self.batches.current[0] if self.batches.current
                           else None)

    @workflow.query
    def gates_list(self) -> list[GateRecord]:
        """The run's own gates (the plan gate); task gates live on the task workflows."""
        return list(self.gates.records)

    @workflow.signal(name="approve")
    async def approve(self, raw: RawValue) -> None:
        """Decide the plan gate, or pass a task's decision on to that task's workflow.

        The ``GateDecision`` is taken raw, so its size is checked before it is decoded and a
        malformed or undecodable one is refused and recorded.
        """
        decision = self.gates.parse(raw)
        if decision is None:
            return
        problem = self.branches.check_choice(decision)
        if problem is not None:
            self.gates.refuse(decision, problem)
            return
        if decision.branch is not None:
            await self._to_branch(decision)
            return
        if decision.task_id is None:
            with contextlib.suppress(GateRefusedError):
                self.gates.offer(decision)
            return
        if decision.task_id not in self.state.running:
            if await self.batches.pass_on(decision):  # a large run's task, in its batch
                return
            self.gates.refuse(decision, f"task {decision.task_id!r} is not running in this run")
            return
        child = workflow.get_external_workflow_handle(
            task_workflow_id(workflow.info().workflow_id, decision.task_id))
        try:
            await child.signal("approve", decision)
        except ApplicationError as err:  # the task ended meanwhile
            self.gates.refuse(decision, f"task {decision.task_id!r}: {err}")

    @workflow.update(name="supply_plan")
    async def supply_plan(self, raw: RawValue) -> RunProgress:
        """A person's ``SuppliedPlan`` for a goal run that waits for one.

        ``assay plan RUN FILE`` sends it; one sent while the run still starts or plans waits
        until the run awaits a plan. A refusal is a non-retryable ``PlanRefused`` error saying
        why.
        """
        await self.planning.until_awaiting()
        self.planning.take_supplied(raw)
        return self.progress()

    @supply_plan.validator
    def _check_plan(self, raw: RawValue) -> None:
        self.planning.check_supplied(raw)

    @workflow.update(name="decide")
    def decide(self, raw: RawValue) -> GateRecord:
        """Decide the plan gate with a ``GateDecision`` and answer with it.

        Task gates are decided on the task's workflow. A refusal is recorded like the
        signal's, then fails the update with a non-retryable ``GateRefused`` error.
        """
        decision = self.gates.decision_of(raw)
        problem = self.branches.check_choice(decision)
        if problem is not None:
            raise self.gates.refused(decision, problem)
        if decision.task_id is None:
            return self.gates.settle(decision)
        where = task_workflow_id(workflow.info().workflow_id, decision.task_id)
        raise self.gates.refused(
            decision, f"task gates are decided on the task's workflow {where} (`assay approve "
                      f"{workflow.info().workflow_id} --gate {decision.gate} --task "
                      f"{decision.task_id}` sends it there)")

    @decide.validator
    def _check_decision(self, raw: RawValue) -> None:
        self.gates.check_size(raw)

    async def _to_branch(self, decision: GateDecision) -> None:
        """Pass a decision on to the branch whose task's gate it is for."""
        name = decision.branch or ""
        if name not in self.branches.running():
            self.gates.refuse(decision, f"branch {name!r} is not running in this run")
            return
        handle = workflow.get_external_workflow_handle(self.branches.records[name].workflow_id)
        try:
            await handle.signal("approve", decision)
        except ApplicationError as err:  # the branch ended meanwhile
            self.gates.refuse(decision, f"branch {name!r}: {err}")

    @workflow.query(name="branches")
    def branches_tree(self) -> BranchTree:
        """The run's branches, how they compared and which line was kept; the steering log."""
        return self.branches.tree()

    @workflow.signal(name="branch")
    def branch(self, raw: RawValue) -> None:
        """Start branches from a checkpoint (a ``BranchRequest``); a refusal is recorded."""
        with contextlib.suppress(RequestRefusedError, BranchRefusedError):
            self.branches.start(self.branches.plan(self._read(raw, BranchRequest)))

    @workflow.update(name="start_branches")
    def start_branches(self, raw: RawValue) -> BranchTree:
        """Start branches and answer with them; a refusal fails with ``BranchRefused``."""
        try:
            started = self.branches.start(self.branches.plan(self._read(raw, BranchRequest)))
        except (RequestRefusedError, BranchRefusedError) as err:
            raise refusal(str(err), ErrorType.BRANCH_REFUSED) from None
        return self.branches.answer(started)

    @workflow.signal(name="steer")
    async def steer(self, raw: RawValue) -> None:
        """Pause, resume, cancel or close the run (a ``SteerRequest``); refusals recorded."""
        with contextlib.suppress(RequestRefusedError):
            await self.steering.apply(self._read(raw, SteerRequest))

    @workflow.update(name="steer_run")
    async def steer_run(self, raw: RawValue) -> BranchTree:
        """Steer the run and answer with its state; a refusal fails with ``SteerRefused``."""
        try:
            await self.steering.apply(self._read(raw, SteerRequest))
        except RequestRefusedError as err:
            raise refusal(str(err), ErrorType.STEER_REFUSED) from None
        return self.branches.answer([])

    @workflow.update(name="checkpoint")
    def checkpoint(self, raw: RawValue) -> Checkpoint:
        """Name the run's state now (a ``CheckpointRequest``); refused: ``CheckpointRefused``."""
        req = None
        try:
            req = self._read(raw, CheckpointRequest)
            return self.branches.points.name(req)
        except (RequestRefusedError, CheckpointRefusedError) as err:
            if req is not None:
                self.branches.refuse(req.by, str(err))
            raise refusal(str(err), ErrorType.CHECKPOINT_REFUSED) from None

    @workflow.query(name="checkpoints")
    def checkpoints(self) -> CheckpointList:
        """The run's named checkpoints: people's, and the latest of its errors and approvals."""
        return self.branches.points.listing()

    def _read(self, raw: RawValue, model: type[RequestT]) -> RequestT:
        """A branch, steer or checkpoint request, its size checked first; refusals recorded."""
        limit, what = ((BRANCH_MAX_BYTES, "branch request") if model is BranchRequest
                       else (CHECKPOINT_MAX_BYTES, "checkpoint request")
                       if model is CheckpointRequest else (STEER_MAX_BYTES, "steer request"))
        try:
            return read(raw, model, limit=limit, what=what)
        except RequestRefusedError as err:
            self.branches.refuse("unknown", str(err))
            raise

    # --- the pipeline --------------------------------------------------------------------

    @workflow.run
    async def run(self, req: ResearchInput) -> ResearchResult:
        """Run the plan; return how it ended (each task's detail is in its report)."""
        state = self.state
        started = workflow.now()
        upsert_keywords(**{KIND_KEY.name: "run", PLAN_KEY.name: req.plan_name,
                           STATUS_KEY.name: "running"})
        state.plan = await unpack_plan(req) or state.plan  # a plan of over 1 000 tasks
        if state.plan is None and not req.goal:
            raise ApplicationError("a run needs a plan or a goal", type=ErrorType.INVALID_PLAN,
                                   non_retryable=True)
        state.log.open("checkpoint", "start", status="running",
                       inputs={"plan": req.plan_name, "plan_sha256": req.plan_sha256,
                               "goal": req.goal, "data": [d.name for d in req.data]},
                       holds="root")
        cancelled = False
        try:
            if req.parent is not None:
                await self._from_parent(req.parent)
            else:
                await self._pipeline()
        except asyncio.CancelledError:  # `temporal workflow cancel`: wind down, then report
            cancelled = True
            await self._wind_down("temporal")
        except Exception as err:  # a bug in the run's own code ends it failed, with the reason
            if isinstance(err, FailureError):
                raise
            what = clip(f"{type(err).__name__}: {err}", 500)
            state.broken = state.reason = (f"the run failed inside ({what}); its unfinished "
                                           "tasks were cancelled")
            await self._wind_down("run")
        state.set_phase("report")
        tree = self.branches.tree() if self.branches.records else None
        report = run_report(state, started, gates=self.gates.records, model=self.agents.spend,
                            branches=tree, checkpoints=self.branches.points.listing())
        await write_report(state, report)
        result = run_result(report)
        state.set_status(result.status)
        state.set_phase("done")
        state.log.details.set("outcome", outcome_text(result.status, result.status_reason))
        if cancelled:
            raise asyncio.CancelledError("the run was cancelled; its report is written")
        return result

    async def _wind_down(self, by: str) -> None:
        """Cancel what still runs or waits, so every task and branch ends."""
        await self.tasks.wind_down(self.state.order)
        await self.branches.steer(SteerRequest(action="cancel", by=by))
        await self.branches.settle()

    async def _pipeline(self) -> None:
        state, req = self.state, self.state.req
        state.skills_on = req.policy.skills.enabled
        if state.plan is None and state.skills_on:
            state.plan = await plan_from_skill(state, self.agents)
        if state.plan is None:
            state.set_phase("plan")
            state.plan, state.reason = await self.planning.plan_goal()
        if state.plan is not None:
            await self._run_plan(state.plan)
            await self._replan_if_deviated()

    async def _from_parent(self, parent: ParentLink) -> None:
        """A run branching from a closed one: its line reused whole, only the branches run."""
        state = self.state
        if state.plan is None:
            raise ApplicationError("a run that branches from another needs its plan",
                                   type=ErrorType.INVALID_PLAN, non_retryable=True)
        upsert_keywords(**{PARENT_KEY.name: parent.run_id})
        state.order = check_graph(state.plan)
        for result in parent.reused:
            state.results[result.task_id] = result
            state.states[result.task_id] = result.status
            state.reused.add(result.task_id)
        state.set_phase("execute")
        try:
            self.branches.start(self.branches.plan(parent.request))
        except BranchRefusedError as err:
            state.reason = f"the branch request was refused: {err}"
        await self.steering.after_tasks()
        if state.req.goal:
            await answer_goal(state, self.agents)

    async def _run_plan(self, plan: Plan) -> None:
        """Advise the plan, pass its gate, run its tasks and answer the goal."""
        state, req = self.state, self.state.req
        try:
            order = check_graph(plan)
        except PlanError as err:
            raise ApplicationError(f"invalid plan: {err}", type=ErrorType.INVALID_PLAN,
                                   non_retryable=True) from err
        if problem := unreusable(plan, state.req):
            raise ApplicationError(f"invalid plan: {problem}", type=ErrorType.INVALID_PLAN,
                                   non_retryable=True)
        state.order = [*state.order, *order]
        state.states.update({tid: "pending" for tid in order})
        if state.skills_on and not state.from_skill:
            plan = await supply_jobs(state, plan, self.agents)
        if req.policy.memory.enabled and not self.batches.wanted(order):  # else per batch
            plan, state.memory = await consult_memory(req, plan, state.log)
            if state.memory.advice:
                state.plan = plan
        state.log.add("checkpoint", "info", status="planned",
                      outputs={"order": order, "tasks": len(order)})
        if await self.planning.approved(plan, order):
            self.branches.points.plan_approved(self.gates.records)
            state.set_phase("execute")
            await self.tasks.run_all(plan, order)
            await self.steering.after_tasks()
            await answer_run(state, self.agents, plan)

    async def _replan_if_deviated(self) -> None:
        """A skill's plan that failed its promise: plan the goal as if there were no skill."""
        state = self.state
        if not replan_needed(state, can_plan=self.agents.enabled):
            return
        state.set_phase("plan")
        plan, reason = await self.planning.plan_goal()
        if plan is None:
            state.skills.warnings.append(f"planning after the skill's deviation failed: {reason}")
            return
        clash = sorted(d.task_id for d in plan.decisions if d.task_id in state.results)
        if clash:
            state.skills.warnings.append(f"the fallback plan reuses task ids {clash}; not run")
            return
        state.plan = plan
        await self._run_plan(plan)
