"""A large run's tasks in batches, each a child TaskBatchWorkflow, one batch at a time.

A run's history keeps each task it starts as a child: some 8 events and 8 kB a task, so a
run of 10 000 tasks would pass Temporal's 51 200 events and 50 MB. A run of over
:data:`BATCH_FROM` tasks (or of more than ``policy.batch_tasks``) therefore cuts its tasks,
in their Kahn order, into batches of :data:`BATCH_TASKS` and runs each as a child workflow
(``workflows.research.batch``) that runs its tasks as the run would: the run's history
keeps a few events a batch, each batch's history those of its 500 tasks. Batches run one
after the other, so every task a batch's tasks depend on has ended before it starts, and
its result goes with the batch; within a batch ``policy.max_parallel`` tasks run at once.
Each batch consults memory for its own tasks (the whole plan's jobs in one request would
pass the payload limit).
Pause, resume and cancel reach the running batch; a task's gate decision is passed on to
it. When a batch ends, its tasks' results are the run's, as a task's would be: the branches
a plan writes and recovery branches start, checkpoints are named.
"""

from __future__ import annotations

import asyncio
import contextlib

from pydantic import ConfigDict, TypeAdapter
from temporalio import workflow
from temporalio.exceptions import ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.failures import root_message
    from workflows.common.sizes import lean_result
    from workflows.common.turns import next_turn
    from workflows.constants import batch_workflow_id
    from workflows.contracts.batches import BatchInput, pack_plan, pack_results, results_of
    from workflows.contracts.branches import SteerRequest
    from workflows.contracts.gates import GateDecision
    from workflows.contracts.packing import ChunkedPlan, unpack
    from workflows.contracts.plan import Decision, Plan
    from workflows.contracts.policy import RunPolicy
    from workflows.contracts.results import TaskResult
    from workflows.patches import TASK_BATCHES_PATCH
    from workflows.research.batch import TaskBatchWorkflow
    from workflows.research.context import wanted_metrics
    from workflows.research.report import slim_of
    from workflows.research.state import RunState
    from workflows.research.tasks import TaskRunner

BATCH_FROM = 1000
"""A run of more tasks than this runs them in batches (unless ``policy.batch_tasks``)."""
DECODED = 100
"""Task results a run decodes per activation when a batch hands them back."""
BATCH_TASKS = 500
"""Tasks per batch: its history some 4 000 events and 4 MB, its result ~250 kB packed."""


_DECISIONS = TypeAdapter(list[Decision], config=ConfigDict(defer_build=True))


async def unpack_plan(req: ChunkedPlan) -> Plan | None:
    """A run's packed plan, decoded one chunk per activation (None: it has none).

    Validating 10 000 decisions in the activation that reads the run's input would take
    it past Temporal's 2-second deadlock detector on a busy worker; a chunk of 500 takes
    some 0.07 s, and each is an activation of its own (``workflows.common.turns``).
    """
    if not req.packed_plan or not workflow.patched(TASK_BATCHES_PATCH):
        return None
    head = unpack(req.packed_plan[0])
    decisions: list[Decision] = []
    for chunk in req.packed_plan[1:]:
        decisions.extend(_DECISIONS.validate_python(unpack(chunk)))
        await next_turn()
    return Plan.model_validate({**head, "decisions": decisions})


def batch_size(policy: RunPolicy, tasks: int) -> int | None:
    """Tasks per batch for a run of ``tasks`` tasks, or None: the run needs no batches."""
    size = policy.batch_tasks
    if size is None:
        return BATCH_TASKS if tasks > BATCH_FROM else None
    return size if tasks > size else None


class BatchRunner:
    """Runs a large run's tasks in batches.

    Args:
        state: the run's state (order, statuses and results; pause and cancel flags).
        agents: the run's role calls (each batch's budget; the tasks' spend is charged).
        tasks: the run's task runner (its callbacks as tasks start and end; its cancel).
    """

    def __init__(self, state: RunState, agents: AgentCalls, tasks: TaskRunner) -> None:
        self.state, self.agents, self.tasks = state, agents, tasks
        self.current: tuple[str, frozenset[str]] | None = None
        """The running batch: its workflow ID and its tasks."""
        self.whole: frozenset[str] = frozenset()
        """The tasks a task of a later batch depends on: the run keeps their whole results
        (its later batches are given them); of the others, lean ones (``lean_result``), made
        as each part of a batch's results is decoded."""

    def wanted(self, order: list[str]) -> bool:
        """Whether ``order`` runs in batches (recorded as the patch's marker if so)."""
        return (batch_size(self.state.req.policy, len(order)) is not None
                and workflow.patched(TASK_BATCHES_PATCH))

    async def run_all(self, plan: Plan, order: list[str]) -> None:
        """Run ``order`` batch after batch until each task has a result."""
        state = self.state
        size = batch_size(state.req.policy, len(order)) or len(order)
        decisions = plan.by_id()
        wanted = sorted(wanted_metrics(state.plan, state.req.study))
        place = {t: n // size for n, t in enumerate(order)}
        self.whole = frozenset(d for t in order for d in decisions[t].dependencies
                               if place.get(d, -1) != place[t])
        for start in range(0, len(order), size):
            await next_turn()  # an activation of its own (``workflows.common.turns``)
            await workflow.wait_condition(lambda: not state.paused or state.cancelling)
            if state.cancelling:
                break
            batch = asyncio.create_task(self._batch(
                start // size + 1, order[start:start + size], plan, decisions, wanted))
            await workflow.wait_condition(batch.done)
        unstarted = [decisions[t] for t in order if t not in state.results]
        if unstarted:  # the run was cancelled: the batches not begun end cancelled
            await self.tasks.cancel(unstarted)
        state.show_tasks()
        await state.log.flush()

    async def wind_down(self) -> None:
        """The run is cancelled: wait for the running batch to hand back its tasks."""
        await workflow.wait_condition(lambda: self.current is None)

    async def pass_on(self, decision: GateDecision) -> bool:
        """Pass a task's gate decision to the running batch holding the task, if one does."""
        if self.current is None or decision.task_id not in self.current[1]:
            return False
        handle = workflow.get_external_workflow_handle(self.current[0])
        with contextlib.suppress(ApplicationError):  # the batch ended meanwhile
            await handle.signal("approve", decision)
        return True

    async def _batch(self, number: int, ids: list[str], plan: Plan,
                     decisions: dict[str, Decision], wanted: list[str]) -> None:
        """Run one batch and take its tasks' results as the run's."""
        state, req = self.state, self.state.req
        members = frozenset(ids)
        outside = sorted({d for t in ids for d in decisions[t].dependencies} - members)
        reused = [state.results[d] for d in outside if d in state.results]
        inp = BatchInput(
            number=number, run=req.model_copy(update={"plan": None, "packed_plan": []}),
            plan=pack_plan(plan.model_copy(update={"decisions": [decisions[t] for t in ids]})),
            order=ids, reused=pack_results(reused) if reused else "",
            budget=self.agents.budget(),
            skill_uses={t: u for t in ids if (u := state.skill_uses.get(t)) is not None},
            guidelines={t: g for t in ids if (g := state.skills.guidelines.get(t))},
            planned_with=state.skills.guided.get("planner", []), wanted=wanted)
        wf_id = batch_workflow_id(req.run_id, number)
        self.current = (wf_id, members)
        state.log.add("handoff", "start", status="batch",
                      inputs={"batch": number, "first": ids[0], "last": ids[-1],
                              "tasks": len(ids)})
        try:
            results = await self._follow(inp, wf_id)
        except Exception as err:  # a batch must always end with its tasks' results
            cancelled = isinstance(err.__cause__, CancelledError)
            reason = f"its batch's workflow {wf_id} ended abnormally: {root_message(err)}"
            results = [TaskResult(task_id=t, priority=decisions[t].priority,
                                  action=decisions[t].action,
                                  status="cancelled" if cancelled else "failed",
                                  status_reason=reason)
                       for t in ids]
        finally:
            self.current = None
        self._take(number, results, decisions)

    async def _follow(self, inp: BatchInput, wf_id: str) -> list[TaskResult]:
        """Start the batch, pass steering on to it while it runs, return its results."""
        state = self.state
        handle = await workflow.start_child_workflow(
            TaskBatchWorkflow.run, inp, id=wf_id, task_queue=state.req.queues.orchestration,
            static_summary=f"Batch {inp.number}: tasks {inp.order[0]} to {inp.order[-1]} "
                           f"({len(inp.order)})")

        async def forward() -> None:
            sent = [False, False]
            while not sent[1]:
                await workflow.wait_condition(
                    lambda: [state.paused, state.cancelling] != sent)
                sent[:] = [state.paused, state.cancelling]
                action = "cancel" if sent[1] else "pause" if sent[0] else "resume"
                with contextlib.suppress(ApplicationError):  # it ended meanwhile
                    await handle.signal(TaskBatchWorkflow.steer,
                                        SteerRequest(action=action, by="run"))

        steering = asyncio.create_task(forward())
        try:
            result = await handle
        finally:
            steering.cancel()
        state.memory.misses += result.memory_misses
        state.memory.warnings.extend(result.memory_warnings)
        raw, results = result.raw(), list[TaskResult]()
        for start in range(0, len(raw), DECODED):  # a part per activation: ``next_turn``
            await next_turn()
            results.extend(r if r.task_id in self.whole or not r.detail else lean_result(r)
                           for r in results_of(raw[start:start + DECODED]))
        return results

    def _take(self, number: int, results: list[TaskResult],
              decisions: dict[str, Decision]) -> None:
        """The batch's results as the run's; the callbacks a task's end calls."""
        state = self.state
        for result in results:
            tid = result.task_id
            self.agents.charge(result.model)
            state.results[tid] = result
            state.states[tid] = result.status
            slim_of(state, result)  # the report's part, made now rather than at the end
        counts: dict[str, int] = {}
        for result in results:
            counts[result.status] = counts.get(result.status, 0) + 1
            if self.tasks.on_start is not None:
                self.tasks.on_start(decisions[result.task_id])
            if self.tasks.on_finish is not None:
                self.tasks.on_finish(result)
        state.show_tasks()
        state.log.add("handoff", "complete", status="batch", inputs={"batch": number},
                      outputs={"tasks": dict(sorted(counts.items()))})
