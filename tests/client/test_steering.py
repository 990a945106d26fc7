"""The steering client: a closed run's branches start a linked run; an open run's refusals."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from client.assay import AssayClient, RunNotFoundError
from client.linking import parent_input
from client.steering import (
    BranchRefusedError,
    CheckpointRefusedError,
    SteeringClient,
    SteerRefusedError,
)
from tests.client.test_linking import finished_run, request
from workflows.constants import PARENT_KEY, PLAN_KEY
from workflows.contracts.branches import BranchRecord, BranchRequest, BranchTree, SteerRequest


async def test_a_closed_runs_branches_start_a_new_run_linked_to_it(
        own_time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, req, result = await finished_run(own_time_env, task_queue, tmp_path)
    steering = SteeringClient(AssayClient(own_time_env.client, task_queue="elsewhere"))
    asked = request()
    started = await steering.branch(req.run_id, asked)
    again = await steering.branch(req.run_id, request(name="lr-0.2"))
    try:
        assert (started.run_id, started.linked_from, started.names) == (
            f"{req.run_id}.b1", req.run_id, ("lr-0.1",))
        assert started.workflow_ids == (f"{req.run_id}.b1.branch-lr-0.1",)
        assert again.run_id == f"{req.run_id}.b2"  # the first free number
        linked = await parent_input(own_time_env.client, started.run_id)
        assert linked.run_id == started.run_id
        assert (linked.plan, linked.policy, linked.queues) == (req.plan, req.policy, req.queues)
        assert linked.parent is not None and linked.parent.run_id == req.run_id
        assert linked.parent.request == asked.model_copy(update={"channel": "python"})
        assert [(t.task_id, t.status) for t in linked.parent.reused] == [
            (t.task_id, t.status) for t in result.tasks]
        assert linked.parent.reused[0].artifacts  # the whole result, not the summary
        described = await own_time_env.client.get_workflow_handle(started.run_id).describe()
        assert described.typed_search_attributes.get(PARENT_KEY) == req.run_id
        assert described.typed_search_attributes.get(PLAN_KEY) == req.plan_name
    finally:
        for run in (started.run_id, again.run_id):
            await own_time_env.client.get_workflow_handle(run).terminate("test over")


async def test_a_request_the_closed_run_refuses_starts_nothing(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, req, _ = await finished_run(time_env, task_queue, tmp_path)
    steering = SteeringClient(AssayClient(time_env.client, task_queue=task_queue))
    with pytest.raises(BranchRefusedError, match="unknown task '9'"):
        await steering.branch(req.run_id, request(task_id="9"))
    with pytest.raises(RPCError):
        await time_env.client.get_workflow_handle(f"{req.run_id}.b1").describe()
    with pytest.raises(SteerRefusedError, match=r"has finished \(partial\); it takes no "
                                                 "pause now"):
        await steering.steer(req.run_id, SteerRequest(action="pause", by="ada"))


async def test_a_run_that_ended_without_a_result_cannot_be_branched(
        own_time_env: WorkflowEnvironment, task_queue: str) -> None:
    run_id = f"stand-in-{uuid.uuid4().hex[:8]}"
    handle = await own_time_env.client.start_workflow(StandInRun.run, id=run_id,
                                                      task_queue=task_queue)
    await handle.terminate("gone")
    steering = SteeringClient(AssayClient(own_time_env.client, task_queue=task_queue))
    with pytest.raises(BranchRefusedError, match=r"ended \(terminated\) without a result"):
        await steering.branch(run_id, request())
    with pytest.raises(RunNotFoundError):
        await steering.branch("no-such-run", request())


@workflow.defn(name="StandInRun")
class StandInRun:
    """An open run's branch and steering handlers as their contract says they answer."""

    def __init__(self) -> None:
        self.tree = BranchTree(run_id="stand-in")
        self.closed = False

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self.closed)

    @workflow.update(name="start_branches")
    def start_branches(self, req: BranchRequest) -> BranchTree:
        if req.from_task != "1":
            raise ApplicationError(f"the run has no task {req.from_task!r}",
                                   type="BranchRefused", non_retryable=True)
        self.tree.branches += [BranchRecord(name=b.name, from_task=req.from_task,
                                            workflow_id=f"wf-{b.name}") for b in req.branches]
        return self.tree

    @workflow.update(name="steer_run")
    def steer_run(self, req: SteerRequest) -> BranchTree:
        if req.by != "ada":
            raise ApplicationError(f"{req.by!r} may not steer this run; one of: ada",
                                   type="SteerRefused", non_retryable=True)
        self.closed = req.action == "close"
        self.tree.steering.append(f"{req.by} {req.action}d")
        return self.tree

    @workflow.query(name="branches")
    def branches(self) -> BranchTree:
        return self.tree


async def test_an_open_run_answers_with_its_tree_and_its_refusals_say_why(
        time_env: WorkflowEnvironment, task_queue: str) -> None:
    steering = SteeringClient(AssayClient(time_env.client, task_queue=task_queue))
    run_id = f"stand-in-{uuid.uuid4().hex[:8]}"
    async with Worker(time_env.client, task_queue=task_queue, workflows=[StandInRun]):
        handle = await time_env.client.start_workflow(StandInRun.run, id=run_id,
                                                      task_queue=task_queue)
        started = await steering.branch(run_id, request())
        assert (started.run_id, started.linked_from, started.workflow_ids) == (
            run_id, "", ("wf-lr-0.1",))
        with pytest.raises(BranchRefusedError, match=r"^the run has no task '9'$"):
            await steering.branch(run_id, request(task_id="9"))
        with pytest.raises(SteerRefusedError, match="'eve' may not steer this run"):
            await steering.steer(run_id, SteerRequest(action="pause", by="eve"))
        tree = await steering.steer(run_id, SteerRequest(action="pause", by="ada"))
        assert tree.steering == ["ada paused"]
        assert [b.name for b in (await steering.branches(run_id)).branches] == ["lr-0.1"]
        await steering.steer(run_id, SteerRequest(action="close", by="ada"))
        await handle.result()
        assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED


async def test_a_checkpoint_is_named_branched_from_and_refused_once_the_run_has_ended(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    from tests.workflows.common.test_gates import start
    from tests.workflows.harness import Harness, task
    from tests.workflows.research.test_branches import until_open
    from workflows.contracts.checkpoints import CheckpointRequest

    harness = Harness(time_env, task_queue, tmp_path)
    steering = SteeringClient(AssayClient(time_env.client, task_queue=task_queue))
    async with harness.worker():
        run = await start(harness, [task("1"), task("2", deps=["1"], score=0.5)],
                          branching={"hold_open": True})
        await until_open(run)
        point = await steering.checkpoint(run.id, CheckpointRequest(name="all-done", by="ada"))
        with pytest.raises(BranchRefusedError, match=r"no checkpoint 'nope' .*all-done"):
            await steering.from_checkpoint(run.id, "nope", by="ada", branches=[{"name": "x"}])
        with pytest.raises(BranchRefusedError, match="stands for no task"):
            await steering.from_checkpoint(run.id, "all-done", by="ada",
                                           branches=[{"name": "x"}])
        asked = await steering.from_checkpoint(run.id, "all-done", from_task="2",
                                               from_phase="execute", by="ada",
                                               branches=[{"name": "hi", "set": {
                                                   "args.score": 0.9}}])
        started = await steering.branch(run.id, asked)
        await steering.steer(run.id, SteerRequest(action="close", by="ada"))
        result = await run.result()
        with pytest.raises(CheckpointRefusedError, match="has finished"):
            await steering.checkpoint(run.id, CheckpointRequest(name="late", by="ada"))
        with pytest.raises(BranchRefusedError, match="has finished: a branch of a finished"):
            await steering.branch(run.id, asked)
    assert (point.from_task, point.tasks, point.channel) == (
        None, {"1": "completed", "2": "completed"}, "python")
    assert (asked.from_task, asked.from_phase, asked.from_checkpoint) == ("2", "execute",
                                                                          "all-done")
    assert started.names == ("hi",) and result.status == "completed"
    assert result.branches is not None
    assert [(b.checkpoint, b.status) for b in result.branches.branches] == [
        ("all-done", "completed")]
