"""Capture the ``by_category`` histories: each failure retried as often as its category allows.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.retries``
captures this scenario alone (the other saved histories stay as they are). Task ``a`` runs out
of memory at every batch size, a configuration failure: three patched retries, then it ends
``failed_retry``; task ``b`` never produces its evidence: three re-scans, then ``failed_final``.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.results import ResearchResult

DECISIONS = [task("a", behave="oom_above:1", batch_size=64), task("b", behave="no_artifact")]


async def run_retries(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The retries scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    await harness.run(DECISIONS)
    assert harness.result is not None
    assert [t.status for t in harness.result.tasks] == ["failed_retry", "failed_final"]
    return harness.result


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "by_category", await run_retries(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
