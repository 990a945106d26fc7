"""``AssayClient`` on runs no worker serves any more, on the dev server.

A running run whose worker is gone answers no query: ``assay runs`` lists it without its task
tally instead of failing (it once did, for every run listed). A run that completed answers its
progress from its result, so ``assay status`` needs no worker to replay its history, unless the
result had to drop its task list to fit: then the query answers.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient, RunExistsError
from client.runs import RunSummary
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.common import sizes
from workflows.research.workflow import ResearchWorkflow


async def test_a_run_nobody_serves_is_listed_without_its_tally(
        dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    queue = f"unserved-{uuid.uuid4().hex[:8]}"
    harness = Harness(dev_env, queue, tmp_path)
    req = harness.request([task("a")])
    await dev_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                        task_queue=queue)
    client = AssayClient(dev_env.client, task_queue=queue)
    listed: list[RunSummary] = []

    async def visible() -> bool:  # the server's visibility lags a start by a moment
        listed[:] = await client.list_runs(f'WorkflowId="{req.run_id}"')
        return bool(listed)

    await wait_for(visible, timeout=30, what="the run in the listing")
    (summary,) = listed
    assert summary.status == "running"
    counted = await client.task_counts(summary)
    assert counted == summary and counted.tasks is None
    await dev_env.client.get_workflow_handle(req.run_id).terminate()


async def test_a_completed_run_answers_its_progress_with_no_worker_left(
        dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    queue = f"ended-{uuid.uuid4().hex[:8]}"
    harness = Harness(dev_env, queue, tmp_path)
    req = harness.request([task("a"), task("b", deps=["a"]), task("c", behave="no_artifact")])
    client = AssayClient(dev_env.client, task_queue=queue)
    async with harness.worker():
        await dev_env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                              task_queue=queue)
        queried = await client.handle(req.run_id).query(ResearchWorkflow.progress)
    # every worker of the queue is gone: a query now would wait for one that never comes
    progress = await asyncio.wait_for(client.progress(req.run_id), timeout=10)
    assert progress == queried.model_copy(update={"approvers": []})
    assert progress.order == ["a", "b", "c"]
    assert progress.tasks["a"] == "completed" and progress.tasks["c"] != "completed"
    assert (progress.phase, progress.status) == ("done", "partial")


async def test_a_completed_run_whose_result_dropped_its_task_list_answers_by_its_query(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sizes, "RUN_RESULT_LIMIT", 1800)  # five tasks' summaries do not fit
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task(f"t{i}") for i in range(5)])
    client = AssayClient(time_env.client, task_queue=task_queue)
    async with harness.worker():
        result = await time_env.client.execute_workflow(ResearchWorkflow.run, req,
                                                        id=req.run_id, task_queue=task_queue)
        assert result.tasks == [] and result.task_counts == {"completed": 5}
        progress = await client.progress(req.run_id)
    assert progress.order == [f"t{i}" for i in range(5)]
    assert set(progress.tasks.values()) == {"completed"}


async def test_a_second_start_of_a_failed_run_names_its_real_outcome(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """It once said "(completed)": Temporal's status of a run Assay ended ``failed``."""
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("a", behave="crash")], max_retries=0).model_copy(
        update={"plan_name": f"failing-{uuid.uuid4().hex[:8]}"})
    client = AssayClient(dev_env.client, task_queue=task_queue)
    async with harness.worker():
        run_id = await client.start_run(req)
        assert (await client.result(run_id)).status == "failed"
        with pytest.raises(RunExistsError) as refused:
            await client.start_run(req)
    assert str(refused.value) == (
        f"a run of this plan or goal already exists: {run_id} (failed); call "
        "start_run(..., again=True) to start another run of it")
    assert refused.value.status == "failed" and "--again" not in str(refused.value)
