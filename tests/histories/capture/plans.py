"""Capture the ``plans`` histories: a goal run given its plan while it still starts.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.plans``
captures this scenario alone (the other saved histories stay as they are). The goal run has no
model and waits for a person's plan (``no_model: wait``); ``supply_plan`` arrives while the run
still asks the skill library, is held and taken once the run
awaits a plan; the run then runs the plan's two tasks.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.client import WorkflowUpdateStage
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.plan import Plan
from workflows.contracts.results import ResearchResult, RunProgress, SuppliedPlan
from workflows.library.contracts import MatchAnswer, MatchInput
from workflows.research.workflow import ResearchWorkflow

PLAN = SuppliedPlan(plan_name="by-hand", plan_sha256="2" * 64, by="ada",
                    plan=Plan.model_validate({"decisions": [task("a"), task("b", deps=["a"])]}))


async def run_plans(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The plans scenario (see the module's docstring)."""
    asked, answer = asyncio.Event(), asyncio.Event()

    async def match_skills(req: MatchInput) -> MatchAnswer:
        asked.set()
        await answer.wait()
        return MatchAnswer()

    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"match_skills": match_skills})
    req = harness.goal_request("Do petal widths differ by species?", skills={"enabled": True},
                               agents={"no_model": "wait"})
    async with harness.worker():
        run = await env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                              task_queue=harness.queue)
        await asyncio.wait_for(asked.wait(), timeout=30)
        update = await run.start_update(  # pyright: ignore[reportUnknownMemberType]
            "supply_plan", PLAN, wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            result_type=RunProgress)
        answer.set()
        await update.result()
        return await run.result()


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "plans", await run_plans(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
