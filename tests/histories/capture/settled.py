"""Capture the ``settled`` histories: search attributes already set are not upserted again.

The path of patch ``settled-attributes``, captured alone by ``python -m
tests.histories.capture.settled`` (the other saved histories stay as they are: they are the
path before it; a full capture takes every scenario down the new path):

- ``settled``: the run started as the client starts it, with its kind, plan and status; task
  ``a`` succeeds, task ``b`` is patched and retried (the ``coalesced`` plan). Neither the run
  nor its tasks (started by the run with theirs) upsert them again.
- ``settled_batches``: a run of three batches (``batches``), whose batches start the tasks.
- ``settled_branched``: a run with branches from a checkpoint (``branched``), whose branches
  start their tasks.
- ``settled_study``: a study (``study``), whose cycles' runs start with their kind, plan and
  status: its first execution and its first cycle's run. (Its second execution is not kept:
  captured today, on the code before this change as well, it does not replay. Its last
  workflow task follows the local activity that recorded the cycle gate's second approval,
  and replay reaches the study's ``own-test-verdicts`` decision one task earlier than the
  live run took it.)
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.histories.capture import alone
from tests.histories.capture.batches import run_batches
from tests.histories.capture.branches import run_branched
from tests.histories.capture.study import run_study
from tests.histories.capture.upserts import DECISIONS
from tests.workflows.harness import Harness
from workflows.constants import cycle_run_id
from workflows.contracts.results import ResearchResult


async def run_settled(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The ``settled`` run (see the module's docstring), started through the client."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    req = harness.request(DECISIONS).model_copy(
        update={"plan_name": f"settled-{uuid.uuid4().hex[:8]}"})
    async with harness.worker():
        run_id = await AssayClient(env.client, task_queue=harness.queue).start_run(req)
        return await env.client.get_workflow_handle(run_id, result_type=ResearchResult).result()


async def capture_settled(env: WorkflowEnvironment, root: Path) -> None:
    """Run the four scenarios and save their histories."""
    from tests.histories.capture.all import save, save_one

    await save(env, "settled", await run_settled(env, root / "run"))
    await save(env, "settled_batches", await run_batches(env, root / "batches"))
    await save(env, "settled_branched", await run_branched(env, root / "branched"))
    study_id, first_run = await run_study(env, root / "study")
    await save_one(env, "settled_study.study-1", study_id, first_run)
    await save_one(env, "settled_study.research-cycle-1", cycle_run_id(study_id, 1))


if __name__ == "__main__":
    asyncio.run(alone(capture_settled))
