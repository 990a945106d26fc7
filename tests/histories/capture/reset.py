"""Capture the ``reset`` histories: a finished run reset to its first workflow task.

``python -m tests.histories.capture.reset`` captures this scenario, on a dev server of its own
(not part of ``python -m tests.histories.capture``: the time-skipping server does not reset). The
``coalesced`` plan (module ``upserts``) runs to its end, then ``temporal workflow reset
--type FirstWorkflowTask`` starts a new execution of it, which runs both tasks again: the
saved research history is that execution's (its first workflow task failed for the reset, its
events naming the new execution), the task histories those of the tasks it started.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.upserts import DECISIONS
from tests.support.e2e import reset_run
from tests.workflows.harness import Harness
from workflows.research.workflow import ResearchWorkflow


async def run_reset(env: WorkflowEnvironment, root: Path) -> tuple[str, str]:
    """Run the plan, reset it and wait for the new execution; the run and execution ids."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    req = harness.request(DECISIONS)
    async with harness.worker():
        handle = await env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                 task_queue=harness.queue)
        await handle.result()
        execution, _ = await reset_run(env.client, req.run_id,
                                                 handle.result_run_id or "")
        await env.client.get_workflow_handle(req.run_id, run_id=execution).result()
    return req.run_id, execution


async def capture_alone() -> None:
    """Run this scenario on a dev server of its own and save its histories."""
    from client.assay import DATA_CONVERTER
    from tests.conftest import binary
    from tests.histories.capture.all import save_one
    from workers.stack.temporal import dev_server_flags
    from workflows.constants import task_workflow_id

    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=binary("temporal"), data_converter=DATA_CONVERTER,
        search_attributes=[], dev_server_extra_args=dev_server_flags(), ui=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_id, execution = await run_reset(env, Path(tmp))
        await save_one(env, "reset.research", run_id, execution)
        for tid in ("a", "b"):
            await save_one(env, f"reset.task-{tid}", task_workflow_id(run_id, tid))
    finally:
        await env.shutdown()


if __name__ == "__main__":
    asyncio.run(capture_alone())
