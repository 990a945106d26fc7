"""Capture the ``answered`` histories: a plan run with a model ends with the output processor's
answer.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.answers``
captures this scenario alone (the other saved histories stay as they are). The plan's two tasks
run with model reviews (every role scripted), then the output processor answers what the
plan's verified results show.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.agents_fakes import FakeAgents, probe_environment
from tests.workflows.harness import Harness, task
from workflows.contracts.results import ResearchResult
from workflows.research.workflow import ResearchWorkflow


async def run_answered(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The answered scenario (see the module's docstring)."""
    agents = FakeAgents()
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides=agents.overrides(), extra=[probe_environment])
    req = harness.request([task("a", score=0.7), task("b", deps=["a"])],
                          agents={"enabled": True})
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=harness.queue)
    assert result.status == "completed", result
    assert len(agents.requests["summarize_run"]) == 1, agents.requests
    return result


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "answered", await run_answered(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
