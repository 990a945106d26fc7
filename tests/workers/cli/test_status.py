"""``assay status`` tells the truth: Temporal's end of a run, a task's retried failure, gates."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import timedelta
from pathlib import Path

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import EXAMPLE, ROOT, worker_env
from tests.support.waiting import wait_for
from tests.workers.cli.test_cli import cli
from tests.workflows.harness import Harness, task
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome
from workflows.contracts.gates import GateDecision
from workflows.research.workflow import ResearchWorkflow

HISTORY_LIMIT = "Workflow history size exceeds limit."


async def waiting_at_plan_gate(client: AssayClient, run_id: str) -> None:
    async def waiting() -> bool:  # not found until the run is started
        return (await client.progress(run_id)).waiting is not None

    await wait_for(waiting, timeout=60, what="the plan gate to wait", every=0.3)


async def test_a_terminated_run_is_reported_terminated_by_every_command(
        served: dict[str, str], dev_env: WorkflowEnvironment) -> None:
    """Its last query said "waiting at the plan gate"; status once said so and exited 0."""
    waiter = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", "run", str(EXAMPLE), "--wait", "--again",
        "--human-gate", "plan", "--approver", "ada", env=served, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert waiter.stderr is not None
    first = (await asyncio.wait_for(waiter.stderr.readline(), timeout=60)).decode()
    assert first.startswith("started "), first
    run_id = first.split()[1]
    await waiting_at_plan_gate(AssayClient(dev_env.client, task_queue="unused"), run_id)
    await dev_env.client.get_workflow_handle(run_id).terminate(reason=HISTORY_LIMIT)
    _, err = await asyncio.wait_for(waiter.communicate(), timeout=60)
    assert waiter.returncode == 8, err.decode()
    assert (f"run {run_id} was terminated by Temporal, without a result: {HISTORY_LIMIT}"
            in err.decode())

    code, out, err = await cli(served, "status", run_id)
    assert code == 8, err
    assert out.startswith(f"run {run_id}: terminated by Temporal, without a result: "
                          f"{HISTORY_LIMIT}")
    assert "nothing waits" in out and "assay approve" not in out and "waiting at" not in out
    code, out, _ = await cli(served, "status", run_id, "--json")
    shown = json.loads(out)
    assert code == 8 and shown["status"] == "terminated" and shown["waiting"] is None
    assert HISTORY_LIMIT in shown["stop_reason"]
    code, out, err = await cli(served, "watch", run_id)
    assert code == 8, err
    assert (f"run         terminated by Temporal, without a result: {HISTORY_LIMIT}"
            in out.splitlines()[-1])

    async def listed() -> bool:
        code, out, _ = await cli(served, "runs", "--limit", "1000")
        rows = [line.split() for line in out.splitlines()]
        return code == 0 and any(row[:2] == [run_id, "terminated"] and "unfinished" in line
                                 for row, line in zip(rows, out.splitlines(), strict=True))

    await wait_for(listed, timeout=30, what="runs to list the run terminated, tasks unfinished")


async def test_a_run_past_its_execution_timeout_is_reported_timed_out(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("1")], gates={"plan": {"human": True}})
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    client = AssayClient(dev_env.client, task_queue=task_queue)
    async with harness.worker():
        handle = await dev_env.client.start_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue,
            execution_timeout=timedelta(seconds=4))
        await waiting_at_plan_gate(client, req.run_id)
        code, out, _ = await cli(env, "status", req.run_id)
        assert code == 0 and "waiting at the plan gate" in out  # true while it runs

        async def timed_out() -> bool:
            return (await handle.describe()).status == WorkflowExecutionStatus.TIMED_OUT

        await wait_for(timed_out, timeout=30, what="the run to time out")
        code, out, err = await cli(env, "status", req.run_id)
    assert code == 8, err
    assert out.startswith(f"run {req.run_id}: timed out by Temporal, without a result: it ran "
                          "past its execution timeout of 4 s")
    assert "anyone may decide" not in out
    assert "task 1        pending" in out


async def test_a_task_whose_job_keeps_failing_shows_the_attempt_and_why(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """The first attempt meets a full disk; the second hangs: status says which and why."""
    attempts: list[int] = []
    release = asyncio.Event()

    async def full_disk(req: ExecuteJobInput) -> ExecutionOutcome:
        attempts.append(activity.info().attempt)
        if activity.info().attempt == 1:
            raise ApplicationError("the work root has 0 bytes free (reserve 1 GiB)",
                                   type="DiskFull")
        await release.wait()
        raise ApplicationError("test over", type="TestOver", non_retryable=True)

    harness = Harness(dev_env, task_queue, tmp_path, overrides={"execute_job": full_disk})
    req = harness.request([task("1")])
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    async with harness.worker():
        await dev_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                            task_queue=task_queue)
        await wait_for(lambda: attempts == [1, 2], timeout=60, what="the second attempt")
        code, out, err = await cli(env, "status", req.run_id)
        release.set()
        await dev_env.client.get_workflow_handle(req.run_id).terminate("test over")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("  task 1 "))
    assert "execute_job attempt 2" in line
    assert "attempt 1 failed: DiskFull: the work root has 0 bytes free (reserve 1 GiB)" in line


async def test_status_names_who_decides_a_tasks_gate_and_a_run_held_open_after_it(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("1")], gates={"result": {"human": True, "approvers": ["ada"]}})
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    client = AssayClient(dev_env.client, task_queue=task_queue)
    async with harness.worker():
        await dev_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                            task_queue=task_queue)

        async def at_gate() -> bool:  # not found until the run starts the task's workflow
            return (await client.task_progress(req.run_id, "1")).waiting is not None

        await wait_for(at_gate, timeout=60, what="task 1's result gate", every=0.3)
        code, out, err = await cli(env, "status", req.run_id)
        assert code == 0, err
        assert ("waiting at the result gate since" in out and "decided by ada: assay approve "
                f"{req.run_id} --gate result --task 1 --by ada" in out)
        await client.decide(req.run_id, GateDecision(gate="result", task_id="1",
                                                     decision="reject", by="ada"))

        async def held_open() -> bool:
            return (await client.progress(req.run_id)).phase == "open"

        await wait_for(held_open, timeout=60, what="the run to be held open", every=0.3)
        code, out, err = await cli(env, "status", req.run_id)
        await dev_env.client.get_workflow_handle(req.run_id).terminate("test over")
    assert code == 0, err
    assert "held open for branches; no gate waits" in out
    assert f"`assay close {req.run_id}`" in out


async def test_an_ended_run_says_who_rejected_it_why_and_each_tasks_reason(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """It once showed ``rejected`` alone."""
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("1")], gates={"plan": {"human": True}})
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    client = AssayClient(dev_env.client, task_queue=task_queue)
    async with harness.worker():
        await dev_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                            task_queue=task_queue)
        await waiting_at_plan_gate(client, req.run_id)
        await client.decide(req.run_id, GateDecision(gate="plan", decision="reject", by="ada",
                                                     comment="the split leaks the test set"))
        result = await client.result(req.run_id)
        code, out, err = await cli(env, "status", req.run_id)
    assert code == 0, err
    assert out.startswith(f"run {req.run_id}: rejected (phase done)")
    line = next(x for x in out.splitlines() if x.startswith("  rejected at the plan gate"))
    assert line.startswith("  rejected at the plan gate by ada on ")
    assert line.endswith(": the split leaks the test set")
    reason = result.tasks[0].status_reason
    assert reason and f"  task 1        {result.tasks[0].status}  {reason}" in out


async def test_a_run_cancelled_through_temporal_is_reported_cancelled(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("1")], gates={"plan": {"human": True}})
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    client = AssayClient(dev_env.client, task_queue=task_queue)
    async with harness.worker():
        handle = await dev_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                     task_queue=task_queue)
        await waiting_at_plan_gate(client, req.run_id)
        await handle.cancel()

        async def ended() -> bool:
            return (await handle.describe()).status != WorkflowExecutionStatus.RUNNING

        await wait_for(ended, timeout=30, what="the run to end")
        status = (await handle.describe()).status
        code, out, err = await cli(env, "status", req.run_id)
    assert status == WorkflowExecutionStatus.CANCELED
    assert code == 8, err
    assert out.startswith(f"run {req.run_id}: cancelled by Temporal, without a result: its "
                          "cancellation was requested through Temporal")
    assert "nothing waits" in out and "anyone may decide" not in out
