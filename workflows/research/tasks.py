"""A run's tasks as child TaskWorkflows: Kahn order, bounded parallelism, blocked dependants.

Among ready tasks the plan's order (higher priority first) decides; at most
``policy.max_parallel`` run at a time. A task whose dependency did not complete ends
``blocked`` with the blocker named, and a child that ends abnormally still leaves a result, so
the run never hangs on a task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import RawValue, SearchAttributePair
from temporalio.exceptions import ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper
    from workflows.common.sizes import quick_result
    from workflows.common.turns import next_turn
    from workflows.constants import (
        PLAN_KEY,
        branch_task_workflow_id,
        started_with,
        task_workflow_id,
    )
    from workflows.contracts.branches import SteerRequest
    from workflows.contracts.execution import DependencyArtifact
    from workflows.contracts.metadata import task_details, task_summary
    from workflows.contracts.plaintext import clip
    from workflows.contracts.plan import Decision, Plan
    from workflows.contracts.results import TaskInput, TaskResult
    from workflows.research.context import upstream, wanted_metrics
    from workflows.research.state import RunState
    from workflows.task.workflow import TaskWorkflow

if TYPE_CHECKING:
    from workflows.research.batches import BatchRunner

class TaskRunner:
    """Runs the tasks of one run's plan.

    Args:
        state: the run's state (task order, statuses and results, memory's and skills' advice).
        agents: the run's role calls (the budget each task starts with, and their spend).
    """

    def __init__(self, state: RunState, agents: AgentCalls) -> None:
        self.state = state
        self.agents = agents
        self.on_start: Callable[[Decision], None] | None = None
        """Called as each task starts (the run starts the branches a plan explores)."""
        self.on_finish: Callable[[TaskResult], None] | None = None
        """Called as each task ends (the run starts recovery branches)."""
        self._cancelled: set[str] = set()
        """Tasks whose workflows were asked to cancel (asked once only)."""
        self._requests: list[asyncio.Task[None]] = []
        """Cancel requests on their way (a run does not wait for them to be answered)."""
        self.batches: BatchRunner | None = None
        """How a large run runs its tasks (in batches); none in a batch or a branch."""
        self.wanted: frozenset[str] | None = None
        """The metrics a dependency's digest keeps first, when given (a batch's: the whole
        plan's); else the plan's own."""

    async def run_all(self, plan: Plan, order: list[str]) -> None:
        """Run the plan's tasks in ``order`` until each has a result."""
        if self.batches is not None and self.batches.wanted(order):
            await self.batches.run_all(plan, order)
            return
        state = self.state
        decisions = plan.by_id()
        limit = state.req.policy.max_parallel
        pending = list(order)
        children: list[asyncio.Task[None]] = []
        while pending or state.running:
            if state.cancelling:
                await self.cancel([decisions[tid] for tid in pending])
                pending.clear()
            for tid in list(pending):
                decision = decisions[tid]
                blocker = self._blocker(decision)
                if blocker is not None:
                    pending.remove(tid)
                    self._block(decision, blocker)
                elif (len(state.running) < limit and not state.paused
                      and self._ready(decision)):
                    pending.remove(tid)
                    state.running.add(tid)
                    children.append(asyncio.create_task(self._run_task(decision)))
            if not state.running and not (pending and state.paused):
                break
            moved = self._moved()  # taken before the flush: a task may end while it writes
            await state.log.flush()  # the events so far, before the tasks run
            await workflow.wait_condition(moved)
        await asyncio.gather(*children)
        await state.log.flush()

    def _moved(self) -> Callable[[], bool]:
        """Whether, since now, a task has finished, a pause ended or the run was cancelled."""
        state = self.state
        finished, paused, cancelling = len(state.results), state.paused, state.cancelling
        return lambda: (len(state.results) > finished or (paused and not state.paused)
                        or (state.cancelling and not cancelling))

    async def cancel(self, pending: list[Decision]) -> None:
        """Cancel the running tasks' workflows; the pending ones end cancelled unstarted."""
        state = self.state
        for tid in sorted(state.running - self._cancelled):
            self._cancelled.add(tid)
            handle = workflow.get_external_workflow_handle(self.workflow_id(tid))
            # the task's own end is what the run waits for, not the server's answer
            self._requests.append(asyncio.create_task(_request_cancel(handle)))
        for n, decision in enumerate(pending):  # thousands in a large run: ``quick_result``
            if n and not n % 1000:
                await next_turn()
            state.results[decision.task_id] = quick_result(
                task_id=decision.task_id, priority=decision.priority, action=decision.action,
                status="cancelled", status_reason="cancelled before it started: the run was "
                                                  "cancelled")
            state.states[decision.task_id] = "cancelled"
        state.log.add("handoff", "info", status="cancelling",
                      inputs={"running": sorted(state.running)},
                      outputs={"unstarted": [d.task_id for d in pending]})

    def steer(self, req: SteerRequest) -> None:
        """Pause, resume or cancel this line (its parent sent ``req`` and checked it)."""
        state = self.state
        state.steer(req.action)
        state.log.add("approval", "info", agent=req.by, status=req.action,
                      outputs={"comment": req.comment})

    async def pass_on(self, gates: GateKeeper, raw: RawValue, where: str = "") -> None:
        """Pass a gate decision on to the running task it names (``where``: "in branch b")."""
        decision = gates.parse(raw)
        if decision is None or decision.task_id is None:
            return
        if decision.task_id not in self.state.running:
            gates.refuse(decision, f"task {decision.task_id!r} is not running{where}")
            return
        child = workflow.get_external_workflow_handle(self.workflow_id(decision.task_id))
        with contextlib.suppress(ApplicationError):  # the task ended meanwhile
            await child.signal("approve", decision)

    def workflow_id(self, task_id: str) -> str:
        """The workflow ID of ``task_id`` in this line (the main line's or a branch's)."""
        state = self.state
        if state.branch:
            return branch_task_workflow_id(state.req.run_id, state.branch, task_id)
        return task_workflow_id(state.req.run_id, task_id)

    def _ready(self, decision: Decision) -> bool:
        return all(self.state.states[d] == "completed" for d in decision.dependencies)

    def _blocker(self, decision: Decision) -> str | None:
        for dep in decision.dependencies:
            if dep in self.state.results and self.state.states[dep] != "completed":
                return dep
        return None

    def _block(self, decision: Decision, blocker: str) -> None:
        state = self.state
        reason = (f"blocked by task {blocker}, which ended {state.states[blocker]}: "
                  f"{state.results[blocker].status_reason}")
        state.results[decision.task_id] = TaskResult(
            task_id=decision.task_id, priority=decision.priority, action=decision.action,
            status="blocked", status_reason=reason)
        state.states[decision.task_id] = "blocked"
        state.log.add("handoff", "info", status="blocked", inputs={"task_id": decision.task_id},
                      outputs={"reason": reason})

    async def wind_down(self, order: list[str]) -> None:
        """After the run was cancelled mid-way: cancel what runs, end the rest cancelled."""
        state = self.state
        state.cancelling = True
        if self.batches is not None:
            await self.batches.wind_down()
        decisions = state.plan.by_id() if state.plan is not None else {}
        await self.cancel([decisions[t] for t in order
                            if t in decisions and t not in state.results
                            and t not in state.running])
        await workflow.wait_condition(lambda: not state.running)

    async def _run_task(self, decision: Decision) -> None:
        """Run one task; whatever goes wrong here ends it failed, with the reason."""
        try:
            await self._task(decision)
        except Exception as err:  # a task must end with a reason, never strand the run
            self._ended_inside(decision, err)

    def _ended_inside(self, decision: Decision, err: Exception) -> None:
        """Record a task whose handling in this run raised ``err`` as failed, if it is not."""
        state, tid = self.state, decision.task_id
        state.running.discard(tid)
        what = clip(f"{type(err).__name__}: {err}", 500)
        state.log.add("error", "error", status="task_handling_failed", inputs={"task_id": tid},
                      outputs={"reason": what})
        if tid in state.results:
            return
        state.results[tid] = TaskResult(
            task_id=tid, priority=decision.priority, action=decision.action, status="failed",
            status_reason=f"the run's handling of task {tid} failed ({what}); its workflow "
                          f"{self.workflow_id(tid)}, if it started, says how far it got")
        state.states[tid] = "failed"

    async def _task(self, decision: Decision) -> None:
        state, req, tid = self.state, self.state.req, decision.task_id
        if self.on_start is not None:
            self.on_start(decision)
        state.states[tid] = "running"
        state.show_tasks()
        handed = state.log.open("handoff", "start", status="running", inputs={"task_id": tid})
        task_input = TaskInput(run_id=req.run_id, decision=decision, queues=req.queues,
                               policy=req.policy,
                               dependency_artifacts=self._dependency_artifacts(decision),
                               upstream=upstream(decision, state.results,
                                                 self.wanted if self.wanted is not None
                                                 else wanted_metrics(state.plan, req.study)),
                               goal=req.goal,
                               data=[d for d in req.data if d.name in decision.inputs],
                               budget=self.agents.budget(),
                               memory=state.memory.advice.get(tid),
                               skill=state.skill_uses.get(tid),
                               guidelines=state.skills.guidelines.get(tid, []),
                               planned_with=state.skills.guided.get("planner", []),
                               branch=state.branch,
                               start=state.starts.get(tid), parent_event=handed)
        try:
            result = await workflow.execute_child_workflow(
                TaskWorkflow.run, task_input, id=self.workflow_id(tid),
                task_queue=req.queues.orchestration,
                search_attributes=started_with("task", SearchAttributePair(PLAN_KEY,
                                                                          req.plan_name)),
                static_summary=task_summary(decision), static_details=task_details(decision),
            )
        except Exception as err:  # a task must always end with a status, never hang the run
            cancelled = isinstance(err.__cause__, CancelledError)
            reason = f"task workflow ended abnormally: {root_message(err)}"
            result = TaskResult(task_id=tid, priority=decision.priority, action=decision.action,
                                status="cancelled" if cancelled else "failed",
                                status_reason=reason)
        state.running.discard(tid)
        self.agents.charge(result.model)
        state.states[tid] = result.status
        state.show_tasks()
        state.results[tid] = result
        state.log.add("handoff", "complete", status=result.status,
                      inputs={"task_id": tid}, outputs={"reason": result.status_reason},
                      under=handed)
        if self.on_finish is not None:
            self.on_finish(result)

    def _dependency_artifacts(self, decision: Decision) -> list[DependencyArtifact]:
        """The dependencies' verified artifacts, and the earlier cycles' it reuses."""
        return [
            *(DependencyArtifact(task_id=dep, name=a.name, path=a.path, sha256=a.sha256)
              for dep in decision.dependencies
              for a in self.state.results[dep].artifacts),
            *(a for a in self.state.req.earlier if a.task_id in decision.reuse),
        ]


async def _request_cancel(handle: workflow.ExternalWorkflowHandle[Any]) -> None:
    """Ask a task's workflow to cancel; one that ended meanwhile needs nothing."""
    with contextlib.suppress(ApplicationError):
        await handle.cancel()
