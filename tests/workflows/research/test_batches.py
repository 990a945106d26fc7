"""A large run runs its tasks in batches, each a child workflow, and works as any run.

``policy.batch_tasks`` makes a small plan run in batches, so each behaviour is checked in
seconds; the 10 000-task run at the end is the real size (``slow``: ``make test`` runs it,
``make test-fast`` does not).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from activities.reports.writer import ReportWriter
from client.assay import DATA_CONVERTER, AssayClient
from client.batches import batched_progress
from tests.workflows.common.test_gates import task_gate_waiting
from tests.workflows.harness import Harness, task
from workflows.constants import batch_workflow_id, task_workflow_id
from workflows.contracts.branches import SteerRequest
from workflows.contracts.gates import GateDecision
from workflows.research.batch import TaskBatchWorkflow
from workflows.research.workflow import ResearchWorkflow

TEN_THOUSAND = 10_000


async def test_a_plan_runs_in_batches_with_dependencies_across_them(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task("a"), task("b", deps=["a"]), task("c", behave="crash"),
            task("d", deps=["c"]), task("e", deps=["a", "b"])]
    report = await harness.run(plan, batch_tasks=2, max_parallel=2)
    statuses = {t.task_id: t.status for t in report.tasks}
    assert statuses == {"a": "completed", "b": "completed", "c": "failed", "d": "blocked",
                        "e": "completed"}
    assert "blocked by task c" in next(t for t in report.tasks if t.task_id == "d").status_reason
    assert harness.sandbox.deps_seen["e"] == ["a/out.txt", "b/out.txt"]  # across batches
    run_id = report.run_id
    for number in (1, 2, 3):
        described = await time_env.client.get_workflow_handle(
            batch_workflow_id(run_id, number)).describe()
        assert described.status is not None and described.status.name == "COMPLETED"
    parent = await time_env.client.get_workflow_handle(
        task_workflow_id(run_id, "e")).describe()
    assert parent.parent_id == batch_workflow_id(run_id, 3)
    assert harness.result is not None  # a result that dropped its tasks: the batches say
    read = await batched_progress(time_env.client, harness.result, "done")
    assert read is not None and read.tasks == statuses and read.order == list("abcde")


async def test_gates_and_steering_reach_the_running_batch(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """A task's gate decision sent to the run reaches its task in the running batch; a
    cancel ends that batch's tasks and leaves the later batches unstarted."""
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task(f"t{i}") for i in range(6)]
    req = harness.request(plan, batch_tasks=3, max_parallel=1,
                          gates={"step": {"human": True}})
    client = AssayClient(time_env.client, task_queue=task_queue)
    async with harness.worker():
        handle = await time_env.client.start_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=harness.queue)
        await _until(client, req.run_id, "t0", "running")  # the batch's progress, overlaid
        await task_gate_waiting(time_env.client.get_workflow_handle(
            task_workflow_id(req.run_id, "t0")), "step")
        await handle.signal("approve", GateDecision(gate="step", task_id="t0",
                                                    decision="approve", by="tester"))
        await task_gate_waiting(time_env.client.get_workflow_handle(
            task_workflow_id(req.run_id, "t1")), "step")
        await handle.signal("steer", SteerRequest(action="cancel", by="tester"))
        result = await handle.result()
    statuses = {t.task_id: t.status for t in result.tasks}
    assert statuses == {"t0": "completed", "t1": "cancelled", "t2": "cancelled",
                        "t3": "cancelled", "t4": "cancelled", "t5": "cancelled"}
    assert "before it started" in next(t for t in result.tasks if t.task_id == "t4").status_reason
    with pytest.raises(RPCError):
        await time_env.client.get_workflow_handle(batch_workflow_id(req.run_id, 2)).describe()


async def test_temporal_cancel_winds_the_running_batch_down_and_writes_the_report(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task(f"t{i}") for i in range(4)], batch_tasks=2, max_parallel=1,
                          gates={"step": {"human": True}})
    async with harness.worker():
        handle = await time_env.client.start_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=harness.queue)
        await task_gate_waiting(time_env.client.get_workflow_handle(
            task_workflow_id(req.run_id, "t0")), "step")
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as ended:
            await handle.result()
    assert isinstance(ended.value.cause, CancelledError)
    written = harness.reports.last
    assert written is not None and written.report.status == "cancelled"
    tasks = {t.task_id: t for t in written.report.tasks}
    assert {t: r.status for t, r in tasks.items()} == dict.fromkeys(
        ("t0", "t1", "t2", "t3"), "cancelled")
    assert "before it started" not in tasks["t0"].status_reason  # it was running, in batch 1
    assert "before it started" in tasks["t2"].status_reason  # batch 2 never started
    assert harness.sandbox.ran == []


async def test_a_large_run_and_its_batches_pass_their_turns_without_a_timer(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """Between two parts of their long work (the plan's chunks, a batch's results) the run
    and its batches end the activation with the ``pass_turn`` local activity: a timer would
    wait for the server's next second each time (``workflows.common.turns``)."""
    harness = Harness(time_env, task_queue, tmp_path)
    report = await harness.run([task(f"t{i}") for i in range(4)], batch_tasks=2)
    assert {t.status for t in report.tasks} == {"completed"}
    for wf_id in (report.run_id, batch_workflow_id(report.run_id, 1),
                  batch_workflow_id(report.run_id, 2)):
        events = (await time_env.client.get_workflow_handle(wf_id).fetch_history()).events
        assert not [e for e in events if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED]
        turns = [e for e in events if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
                 and b"pass_turn" in e.marker_recorded_event_attributes.SerializeToString()]
        assert turns, wf_id


async def _until(client: AssayClient, run_id: str, task_id: str, status: str) -> None:
    """Wait until the run's progress (its running batch's, overlaid) shows the task so."""
    for _ in range(600):
        if (await client.progress(run_id)).tasks.get(task_id) == status:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"task {task_id} never stood {status}")


@pytest.mark.scale
@pytest.mark.timeout(3600)
async def test_a_run_of_ten_thousand_tasks_completes_within_temporals_limits(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """10 000 tasks on the fake sandbox: every one completes, no history nears 51 200
    events or 10 MB, every payload stays under 2 MiB, the report is a summary with each
    task's detail in a file, and the run's history replays (its plan decoded in chunks).

    Half an hour on a loaded 2-core machine: ``make test-scale`` runs it, ``make test`` not.
    """
    writer = ReportWriter(tmp_path / "runs")
    harness = Harness(dev_env, task_queue, tmp_path / "work", large=True, overrides={
        "write_report": writer.write_report, "write_task_report": writer.write_task_report})
    req = harness.request([task(f"t{i:05d}") for i in range(TEN_THOUSAND)], max_parallel=16)
    run_id = req.run_id
    async with harness.worker():
        handle = await dev_env.client.start_workflow(
            ResearchWorkflow.run, req, id=run_id, task_queue=harness.queue)
        del req  # its 180 000 decoded objects: no real worker's collector walks a client's plan
        result = await handle.result()
    assert result.status == "completed", result.status_reason
    assert result.status_reason.startswith("completed: 10000 completed"), result.status_reason
    run_history = await handle.fetch_history()
    histories = [run_history, *[await dev_env.client.get_workflow_handle(
        batch_workflow_id(run_id, n)).fetch_history() for n in range(1, 21)]]
    for history in histories:
        assert len(history.events) < 10_000
        assert sum(e.ByteSize() for e in history.events) < 10_000_000
        assert max(e.ByteSize() for e in history.events) < 2 * 2**20
    replayed = await Replayer(workflows=[ResearchWorkflow, TaskBatchWorkflow],
                              data_converter=DATA_CONVERTER,  # no 2 s deadlock timer: what
                              debug_mode=True).replay_workflow(  # replay checks is the commands
        run_history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None, replayed.replay_failure
    folder = tmp_path / "runs" / run_id
    summary = next(folder.glob("execution_summary_*.md")).read_text()
    assert "## Tasks by status" in summary and "| completed | 10000 | 100.0% |" in summary
    assert "### Task" not in summary and len(summary) < 20_000
    assert len(list((folder / "tasks").glob("*.json"))) == TEN_THOUSAND
