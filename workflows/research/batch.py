"""TaskBatchWorkflow: one batch of a large run's tasks, a child workflow of the run.

A run of over 1 000 tasks (``workflows.research.batches``) runs them in batches of 500,
each this workflow: the batch's tasks run as child TaskWorkflows through the same
``TaskRunner`` as a run's, with the same workflow IDs (``RUN.task-ID``), so a task's page,
its gates and ``assay approve --task`` are as in any run. The results of the tasks outside the
batch that its tasks depend on come with its input; its tasks' bounded results go back
packed. The run passes on pause, resume and cancel (``steer``) and the decisions of its
tasks' gates (``approve``); ``progress`` answers how its tasks stand (``assay status`` asks
it for the run's running batch).
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import RawValue

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.common.gates import GateKeeper
    from workflows.common.sizes import bound_task
    from workflows.common.turns import next_turn
    from workflows.constants import KIND_KEY, PARENT_KEY, PLAN_KEY, STATUS_KEY
    from workflows.contracts.batches import BatchInput, BatchResult, dump_results
    from workflows.contracts.branches import SteerRequest
    from workflows.contracts.packing import pack
    from workflows.contracts.results import RunProgress
    from workflows.research.memory import consult_memory
    from workflows.research.state import RunState
    from workflows.research.tasks import TaskRunner

BATCH_TASK_LIMIT = 32 * 1024
"""Most bytes of each task's result a batch hands back (the whole is in its detail file)."""
MEMORY_WARNINGS = 20
"""Most of memory's warnings a batch hands back."""
DUMPED = 100
"""Task results a batch bounds and dumps per activation before handing them back."""


@workflow.defn
class TaskBatchWorkflow:
    """Runs one batch of a run's tasks and hands back how each ended."""

    @workflow.init
    def __init__(self, inp: BatchInput) -> None:
        plan = inp.the_plan()
        self.state = state = RunState(inp.run.model_copy(update={"plan": plan}))
        state.log = EventLog(inp.run.run_id, f"batch-{inp.number}")
        state.order = list(inp.order)
        for reused in inp.reused_results():
            state.results[reused.task_id] = reused
            state.states[reused.task_id] = reused.status
            state.reused.add(reused.task_id)
        state.states.update(dict.fromkeys(inp.order, "pending"))
        state.skill_uses = dict(inp.skill_uses)
        state.skills.guidelines = dict(inp.guidelines)
        if inp.planned_with:
            state.skills.guided["planner"] = list(inp.planned_with)
        policy = inp.run.policy
        self.gates = GateKeeper(policy.gates, state.log)
        self.agents = AgentCalls(policy.agents, inp.run.queues, state.log, inp.budget)
        self.tasks = TaskRunner(state, self.agents)
        self.tasks.wanted = frozenset(inp.wanted)

    @workflow.signal(name="steer")
    def steer(self, req: SteerRequest) -> None:
        """Pause, resume or cancel this batch (the run sends it; it was checked there)."""
        self.tasks.steer(req)

    @workflow.signal(name="approve")
    async def approve(self, raw: RawValue) -> None:
        """Pass a decision on to the gate of one of this batch's running tasks."""
        await self.tasks.pass_on(self.gates, raw)

    @workflow.query
    def progress(self) -> RunProgress:
        """The batch's tasks and their statuses (not the ones it reuses)."""
        state = self.state
        return RunProgress(run_id=workflow.info().workflow_id, phase=state.phase,
                           status=state.status, order=state.order,
                           tasks={t: state.states[t] for t in state.order})

    @workflow.run
    async def run(self, inp: BatchInput) -> BatchResult:
        """Run the batch's tasks; return each one's bounded result, packed."""
        state = self.state
        upsert_keywords(**{KIND_KEY.name: "batch", PARENT_KEY.name: inp.run.run_id,
                           PLAN_KEY.name: inp.run.plan_name, STATUS_KEY.name: "running"})
        state.log.add("checkpoint", "start", status="running",
                      inputs={"batch": inp.number, "tasks": len(inp.order),
                              "reused": sorted(state.reused)})
        state.set_phase("execute")
        plan = state.plan
        assert plan is not None
        if inp.run.policy.memory.enabled:  # the run leaves its batches to consult memory
            plan, state.memory = await consult_memory(state.req, plan, state.log)
        await self.tasks.run_all(plan, inp.order)
        tasks: list[Any] = []
        for start in range(0, len(inp.order), DUMPED):  # a part per activation: ``next_turn``
            await next_turn()
            tasks.extend(dump_results([bound_task(state.results[t], limit=BATCH_TASK_LIMIT)
                                       for t in inp.order[start:start + DUMPED]]))
        done = sum(state.results[t].status == "completed" for t in inp.order)
        state.set_status("completed" if done == len(tasks) else "failed")
        state.log.add("checkpoint", "complete", status=state.status,
                      outputs={"completed": done, "tasks": len(tasks)})
        await state.log.flush()
        return BatchResult(number=inp.number, tasks=pack(tasks),
                           memory_misses=state.memory.misses,
                           memory_warnings=state.memory.warnings[:MEMORY_WARNINGS])
