"""Capture the ``tiers`` histories: light tasks, one of which escalates to full.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.tiers``
captures this scenario alone (the other saved histories stay as they are). The run has a model
and tiers by the rules (``tiering: auto``); both tasks' jobs are small, so both are light.
Task ``a`` runs with one model reviewer (the code's) and completes. Task ``b``'s first run
fails and reflection has no patch: it escalates to full (the other two model reviewers see
the job), runs again and completes, with no debugger called.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.agents_fakes import FakeAgents, probe_environment
from tests.workflows.harness import Harness, task
from workflows.contracts.results import RunReport


async def run_tiers(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The tiers scenario (see the module's docstring)."""
    agents = FakeAgents()
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides=agents.overrides(), extra=[probe_environment])
    report = await harness.run([task("a"), task("b", behave="crash_once")],
                               agents={"enabled": True})
    assert [t.status for t in report.tasks] == ["completed", "completed"], report.tasks
    assert "debug_job" not in agents.requests
    assert len(agents.requests["review_job_model"]) == 4  # a: 1; b: 1, then 2 on escalation
    return report


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "tiers", await run_tiers(env, root))

    await alone(scenario)


if __name__ == "__main__":
    import asyncio

    asyncio.run(capture_alone())
