"""Capture the ``flushes`` and ``flushes_reviewed`` histories: events written before waits.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.flushes``
captures these scenarios alone (the other saved histories stay as they are). ``flushes`` is the
``coalesced`` plan (module ``upserts``): task ``a`` succeeds and task ``b`` runs out of memory
above a batch size of 32, is patched and retried, so two review panels of deterministic
reviewers go without a flush of their own and the run flushes before it waits for its tasks.
``flushes_reviewed`` is the agents scenario (planned, coded, model-reviewed, a crash repaired):
its panels flush before the model reviewers are called.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.histories.capture.upserts import run_coalesced


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.histories.capture.all import run_goal, save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        for folder in ("plan", "goal"):
            (root / folder).mkdir()
        await save(env, "flushes", await run_coalesced(env, root / "plan"))
        await save(env, "flushes_reviewed", await run_goal(env, root / "goal"))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
