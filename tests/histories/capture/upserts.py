"""Capture the ``coalesced`` histories: search attributes sent once per activation.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.upserts``
captures this scenario alone (the other saved histories stay as they are). Task ``a`` succeeds;
task ``b`` runs out of memory above a batch size of 32, is patched by reflection and retried,
so its history holds the phases, statuses and attempt counts of a retry, each activation's
sent as one upsert.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.results import ResearchResult

DECISIONS = [task("a"), task("b", deps=["a"], behave="oom_above:32", batch_size=64)]


async def run_coalesced(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The coalesced scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    await harness.run(DECISIONS)
    assert harness.result is not None
    return harness.result


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "coalesced", await run_coalesced(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
