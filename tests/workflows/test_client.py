"""``AssayClient.task_counts``: a running run whose worker is gone does not stop a listing.

On the dev server: a run started on a queue no worker serves answers no query; ``assay runs``
lists it without its task tally instead of failing (it once did, for every run listed).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.e2e_support import wait_for
from tests.workflows.harness import Harness, task
from workflows.client import AssayClient
from workflows.research.workflow import ResearchWorkflow
from workflows.runs import RunSummary


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
