"""``supply_plan`` right after the start is held until the run awaits a plan, never raced.

A run that will never wait for a plan (started with one, or one that ends deferred rather than
wait) refuses at once with why, as a non-retryable ``PlanRefused`` error.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError, WorkflowUpdateStage
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.contracts.errors import ErrorType
from workflows.contracts.plan import Plan
from workflows.contracts.results import ResearchInput, ResearchResult, RunProgress, SuppliedPlan
from workflows.contracts.skills import MatchAnswer, MatchInput
from workflows.research.workflow import ResearchWorkflow

WAIT: dict[str, Any] = {"agents": {"no_model": "wait"}}
PLAN = SuppliedPlan(plan_name="by-hand", plan_sha256="2" * 64, by="ada",
                    plan=Plan.model_validate({"decisions": [task("a"), task("b", deps=["a"])]}))


async def supply(handle: WorkflowHandle[Any, Any], plan: SuppliedPlan = PLAN) -> RunProgress:
    return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        "supply_plan", plan, result_type=RunProgress)


async def refusal(handle: WorkflowHandle[Any, Any]) -> ApplicationError:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await supply(handle)
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == ErrorType.PLAN_REFUSED and cause.non_retryable
    return cause


async def start(harness: Harness, req: ResearchInput) -> WorkflowHandle[Any, ResearchResult]:
    return await harness.env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=harness.queue)


async def test_a_plan_sent_at_once_is_held_until_the_run_awaits_one(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """The run is still at intake (asking the skill library) when the plan arrives."""
    asked, answer = asyncio.Event(), asyncio.Event()

    async def match_skills(req: MatchInput) -> MatchAnswer:
        asked.set()
        await answer.wait()
        return MatchAnswer()

    harness = Harness(time_env, f"plans-{uuid.uuid4().hex[:8]}", tmp_path,
                      overrides={"match_skills": match_skills})
    req = harness.goal_request("Do petal widths differ by species?", skills={"enabled": True},
                               **WAIT)
    async with harness.worker():
        run = await start(harness, req)
        await asyncio.wait_for(asked.wait(), timeout=30)
        update = await run.start_update(  # pyright: ignore[reportUnknownMemberType]
            "supply_plan", PLAN, wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            result_type=RunProgress)
        assert (await run.query(ResearchWorkflow.progress)).phase == "match"  # still at intake
        answer.set()
        taken = await update.result()
        assert taken.status == "running"
        result = await run.result()
    assert result.status == "completed"
    assert [t.task_id for t in result.tasks] == ["a", "b"]


async def test_a_second_plan_sent_at_once_is_refused_once_the_first_is_taken(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    harness = Harness(time_env, f"plans-{uuid.uuid4().hex[:8]}", tmp_path)
    req = harness.goal_request("Do petal widths differ by species?", **WAIT)
    async with harness.worker():
        run = await start(harness, req)
        answers = await asyncio.gather(supply(run), supply(run), return_exceptions=True)
        taken = [a for a in answers if isinstance(a, RunProgress)]
        refused = [a.cause for a in answers if isinstance(a, WorkflowUpdateFailedError)]
        assert len(taken) == 1 and len(refused) == 1, answers
        assert isinstance(refused[0], ApplicationError) and refused[0].non_retryable
        # held with the first, or come once the run has moved on: either way it says why
        assert "this run is not waiting for a plan: " in str(refused[0])
        assert (await run.result()).status == "completed"


async def test_a_run_started_with_a_plan_refuses_one_at_once(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    harness = Harness(time_env, f"plans-{uuid.uuid4().hex[:8]}", tmp_path)
    req = harness.request([task("a")], gates={"plan": {"human": True}})
    async with harness.worker():
        run = await start(harness, req)
        assert "was started with a plan" in str(await refusal(run))  # at once, at intake

        async def at_the_gate() -> bool:  # no intake activity left in flight to terminate
            return (await run.query(ResearchWorkflow.progress)).waiting is not None

        await wait_for(at_the_gate, timeout=20, what="the plan gate")
        await run.terminate("done")


async def test_a_run_that_will_end_deferred_refuses_a_plan_and_says_how(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    harness = Harness(time_env, f"plans-{uuid.uuid4().hex[:8]}", tmp_path)
    req = harness.goal_request("Do petal widths differ by species?")  # no model, defer
    async with harness.worker():
        run = await start(harness, req)
        message = str(await refusal(run))
        assert "will end deferred" in message and "--no-model wait" in message
        assert (await run.result()).status == "deferred"
