"""Capture the ``uses`` histories: a library that records uses with the jobs the tasks ran.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.uses``
captures this scenario alone. The ``guided`` run (a task offered a guideline skill) hands its
outcome to the library, which records the use with the task's job, so alpha_match compares the
guideline with what the job calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.histories.capture.guided import run_guided


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        result, library = await run_guided(env, root)
        await save(env, "uses", result)
        await save_one(env, "uses.library", library)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
