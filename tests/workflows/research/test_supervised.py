"""Whatever raises inside a run's handling of a task ends that task, or the run, with the reason.

On the time-skipping server, with ``FaultyResearchWorkflow`` (the real run, whose handling of
task ``b`` raises as it starts): ``b`` ends failed naming the exception, its dependant ends
blocked, the task beside it completes, and the run ends instead of waiting for ``b``. With
``BrokenResearchWorkflow`` (whose own coroutine raises after its tasks): the run ends
``failed`` with the exception in its reason, and its report is written.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.faulty import BrokenResearchWorkflow, FaultyResearchWorkflow
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branch_siblings import RESULT_WAIT_S


async def test_a_task_whose_handling_raises_ends_failed_with_the_reason(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path, workflows=[FaultyResearchWorkflow])
    req = harness.request([task("a"), task("b", deps=["a"]), task("c", deps=["b"]),
                           task("d", deps=["a"])])
    async with harness.worker():
        handle = await time_env.client.start_workflow(
            FaultyResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue)
        result = await asyncio.wait_for(handle.result(), RESULT_WAIT_S)
    by_id = {t.task_id: t for t in result.tasks}
    assert {t: r.status for t, r in by_id.items()} == {
        "a": "completed", "b": "failed", "c": "blocked", "d": "completed"}
    assert "KeyError: 'a task the run has no result of'" in by_id["b"].status_reason
    assert by_id["c"].status_reason.startswith("blocked by task b, which ended failed")
    assert result.status == "partial"
    assert sorted(harness.sandbox.ran) == ["a", "d"]


async def test_a_run_whose_own_code_raises_ends_failed_with_the_reason_and_its_report(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path, workflows=[BrokenResearchWorkflow])
    req = harness.request([task("a"), task("b", deps=["a"])])
    async with harness.worker():
        handle = await time_env.client.start_workflow(
            BrokenResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue)
        result = await asyncio.wait_for(handle.result(), RESULT_WAIT_S)
    assert result.status == "failed"
    assert result.status_reason.startswith(
        "the run failed inside (AttributeError: 'NoneType' object has no attribute 'plan')")
    written = harness.reports.last
    assert written is not None and written.report.run_id == req.run_id, "the report is written"
    assert written.report.status == "failed"
    assert [t.status for t in result.tasks] == ["completed", "completed"]
