"""BranchWorkflow: one branch of a run, a child workflow that runs its own line of tasks.

It runs the branch-point task from its checkpoint and the tasks downstream of it, as child
TaskWorkflows through the same ``TaskRunner`` as the main line; the upstream tasks' results it
was given are never run again, their artifacts passed on by reference and checked by sha256
in the sandbox. The run steers it with ``steer`` (pause, resume, cancel) and passes it the
decisions of its tasks' gates (``approve``). Its result is small: each task's bounded result.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import RawValue

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.events import upsert_keywords
    from workflows.common.gates import GateKeeper
    from workflows.common.sizes import bound_task
    from workflows.constants import KIND_KEY, PARENT_KEY, PLAN_KEY, STATUS_KEY
    from workflows.contracts.branches import BranchStatus, SteerRequest
    from workflows.contracts.lines import BranchInput, BranchResult
    from workflows.contracts.results import ResearchInput, RunProgress
    from workflows.research.state import RunState
    from workflows.research.tasks import TaskRunner

BRANCH_TASK_LIMIT = 32 * 1024
"""Most bytes of each task's result a branch hands back (the whole is in its detail file)."""


@workflow.defn
class BranchWorkflow:
    """Runs one branch's tasks and hands back how each ended."""

    @workflow.init
    def __init__(self, inp: BranchInput) -> None:
        req = ResearchInput(run_id=inp.run_id, plan_name=inp.plan_name,
                            plan_sha256=inp.plan_sha256, plan=inp.plan, goal=inp.goal,
                            data=inp.data, policy=inp.policy, queues=inp.queues)
        self.state = state = RunState(req, branch=inp.record.name,
                                      parent_event=inp.parent_event)
        state.order = list(inp.order)
        for reused in inp.reused:
            state.results[reused.task_id] = reused
            state.states[reused.task_id] = reused.status
            state.reused.add(reused.task_id)
        state.states.update(dict.fromkeys(inp.order, "pending"))
        if inp.start is not None:
            state.starts[inp.record.from_task] = inp.start
        self.gates = GateKeeper(inp.policy.gates, state.log)
        self.agents = AgentCalls(inp.policy.agents, inp.queues, state.log, inp.budget)
        self.tasks = TaskRunner(state, self.agents)

    @workflow.signal(name="steer")
    def steer(self, req: SteerRequest) -> None:
        """Pause, resume or cancel this branch (the run sends it; it was checked there)."""
        self.tasks.steer(req)

    @workflow.signal(name="approve")
    async def approve(self, raw: RawValue) -> None:
        """Pass a decision on to the gate of one of this branch's running tasks."""
        await self.tasks.pass_on(self.gates, raw, f" in branch {self.state.branch}")

    @workflow.query
    def progress(self) -> RunProgress:
        """The branch's tasks and their statuses (reused ones included)."""
        state = self.state
        return RunProgress(run_id=workflow.info().workflow_id, phase=state.phase,
                           status=state.status, tasks=dict(state.states), order=state.order)

    @workflow.run
    async def run(self, inp: BranchInput) -> BranchResult:
        """Run the branch's tasks; return each one's bounded result."""
        state = self.state
        upsert_keywords(**{KIND_KEY.name: "branch", PARENT_KEY.name: inp.run_id,
                           PLAN_KEY.name: inp.plan_name, STATUS_KEY.name: "running"})
        state.log.open("checkpoint", "start", status="running", holds="root",
                       inputs={"branch": inp.record.name, "from": f"{inp.record.from_task}:"
                               f"{inp.record.from_phase}", "reused": sorted(state.reused)},
                       outputs={"changes": [c.model_dump(mode="json")
                                            for c in inp.record.changes]})
        state.set_phase("execute")
        await self.tasks.run_all(inp.plan, inp.order)
        tasks = [bound_task(state.results[t], limit=BRANCH_TASK_LIMIT) for t in inp.order]
        status = _status([t.status for t in tasks])
        reason = ", ".join(f"{t.task_id} {t.status}" for t in tasks)
        state.set_status("completed" if status == "completed" else "failed")
        state.log.add("checkpoint", "complete", status=status, outputs={"tasks": reason})
        await state.log.flush()
        return BranchResult(name=inp.record.name, status=status, reason=reason, tasks=tasks)


def _status(statuses: list[str]) -> BranchStatus:
    """A branch's status from its tasks': all completed, some, none, or cancelled."""
    done = sum(s == "completed" for s in statuses)
    if statuses and done == len(statuses):
        return "completed"
    if any(s == "cancelled" for s in statuses):
        return "cancelled"
    return "partial" if done else "failed"
