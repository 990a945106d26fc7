"""Capture the ``verified`` histories: evidence verified in the job's own dispatch, the agents
pool's two reviewers asked in one.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.verified``
captures this scenario alone (the other saved histories stay as they are). Each task's panel
asks the agents pool's two reviewers in one dispatch. The sandbox worker
verifies evidence with the job (``verify_with_job``). Task ``a``'s verify step takes the job
dispatch's verification; task ``b`` left its evidence in a sub-folder: the job dispatch finds
it missing, the task re-scans and verifies the re-linked evidence in a dispatch of its own.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.results import RunReport


async def run_verified(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The verified scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root, verify_with_job=True)
    report = await harness.run([task("a"), task("b", behave="misplaced")])
    assert [t.status for t in report.tasks] == ["completed", "completed"], report.tasks
    assert [t.provenance.verification.attempts for t in report.tasks] == [1, 2]
    return report


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "verified", await run_verified(env, root))

    await alone(scenario)


if __name__ == "__main__":
    import asyncio

    asyncio.run(capture_alone())
