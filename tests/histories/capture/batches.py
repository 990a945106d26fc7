"""Capture the ``batches`` histories: a run whose tasks run in batches of two.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.batches``
captures this scenario alone (the other saved histories stay as they are; ``… batches turns``
saves it as ``turns``, the path of patch ``quick-turns``). ``policy.batch_tasks`` of 2 makes
five tasks run as three TaskBatchWorkflows, one after the other (the path a run of over
1 000 tasks takes): ``b`` and ``e`` depend on tasks of an earlier
batch, ``d`` on a task of its own batch, and ``c`` fails, so ``d`` ends blocked.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.results import RunReport

PLAN = [task("a"), task("b", deps=["a"]), task("c", behave="crash"), task("d", deps=["c"]),
        task("e", deps=["a", "b"])]


async def run_batches(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The batches scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    return await harness.run(PLAN, batch_tasks=2, max_parallel=2, max_retries=0)


async def capture_alone(name: str = "batches") -> None:
    """Run this scenario alone and save its histories as ``name`` (``turns``: the same run
    on code that passes turns by a local activity, patch ``quick-turns``)."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, name, await run_batches(env, root))

    await alone(scenario)


if __name__ == "__main__":
    import sys

    asyncio.run(capture_alone(*sys.argv[1:2]))
