"""Capture the ``flushes`` and ``flushes_reviewed`` histories: events written before waits.

Part of ``python -m tests.workflows.capture``; ``python -m tests.workflows.capture_flushes``
captures these scenarios alone (the other saved histories stay as they are). ``flushes``: task
``a`` succeeds and task ``b`` runs out of memory above a batch size of 32, is patched and
retried, so two review panels of deterministic reviewers go without a flush of their own and
the run flushes before it waits for its tasks (``FLUSHES_PATCH``). ``flushes_reviewed`` is the
agents scenario (planned, coded, model-reviewed, a crash repaired): its panels flush before the
model reviewers are called.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from tests.workflows.harness import capture_alone as alone
from workflows.contracts.results import ResearchResult

DECISIONS = [task("a"), task("b", deps=["a"], behave="oom_above:32", batch_size=64)]


async def run_flushes(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The ``flushes`` scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    await harness.run(DECISIONS)
    assert harness.result is not None
    return harness.result


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.workflows.capture import run_goal, save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        for folder in ("plan", "goal"):
            (root / folder).mkdir()
        await save(env, "flushes", await run_flushes(env, root / "plan"))
        await save(env, "flushes_reviewed", await run_goal(env, root / "goal"))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
