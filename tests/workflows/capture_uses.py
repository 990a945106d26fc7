"""Capture the ``uses`` histories: a library that records uses with the jobs the tasks ran.

Part of ``python -m tests.workflows.capture``; ``python -m tests.workflows.capture_uses``
captures this scenario alone. The ``guided`` run (a task offered a guideline skill) hands its
outcome to the library, which records the use with the task's job (patch
``utilisation-sees-jobs``), so alpha_match compares the guideline with what the job calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.capture_guided import run_guided
from tests.workflows.harness import capture_alone as alone


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.workflows.capture import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        result, library = await run_guided(env, root)
        await save(env, "uses", result)
        await save_one(env, "uses.library", library)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
