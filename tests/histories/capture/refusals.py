"""Capture the ``refusals`` histories: gates that refuse signals and updates, then decide.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.refusals``
captures this scenario alone (the other saved histories stay as they are). The plan gate
refuses an oversize signal, one from someone not allowed, bytes that are not JSON and a
``decide`` from the wrong person before ``ada`` approves it; the task's step gate refuses a
``decide`` for the wrong gate before it is approved through the run; the skill library
refuses an oversize and a malformed outcome before it takes a valid one.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.histories.capture import alone
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.constants import task_workflow_id
from workflows.contracts.gates import GateDecision, GateRecord
from workflows.contracts.results import ResearchResult, RunProgress, TaskProgress
from workflows.contracts.skills import TASK_FINISHED, LibraryState, TaskOutcome, library_id
from workflows.library.workflow import OUTCOME_MAX_BYTES, SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow

GATES = {"plan": {"human": True, "approvers": ["ada"]}, "step": {"human": True}}


async def waiting_at(handle: WorkflowHandle[Any, Any], gate: str, kind: type[Any]) -> None:
    """Until the workflow's ``progress`` shows ``gate`` waiting (queried, not slept)."""

    async def waits() -> bool:
        try:
            progress = await handle.query("progress", result_type=kind)
        except Exception:  # the task workflow has not started yet
            return False
        return progress.waiting is not None and progress.waiting.gate == gate

    await wait_for(waits, timeout=30, what=f"the {gate} gate")


async def refused(handle: WorkflowHandle[Any, Any], decision: GateDecision) -> None:
    """A ``decide`` the workflow must refuse."""
    try:
        await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "decide", decision, result_type=GateRecord)
    except WorkflowUpdateFailedError:
        return
    raise AssertionError(f"the decision {decision} was taken")


async def run_refusals(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The refusals scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    req = harness.request([task("a")], gates=GATES)
    async with harness.worker():
        run = await env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                              task_queue=harness.queue)
        await waiting_at(run, "plan", RunProgress)
        await run.signal("approve", {"gate": "plan", "decision": "approve", "by": "x" * 100_000})
        await run.signal("approve", GateDecision(gate="plan", decision="approve", by="eve"))
        await run.signal("approve", RawValue(Payload(metadata={"encoding": b"json/plain"},
                                                     data=b"{not json")))
        await refused(run, GateDecision(gate="plan", decision="approve", by="eve"))
        await run.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "decide", GateDecision(gate="plan", decision="approve", by="ada"),
            result_type=GateRecord)
        child = env.client.get_workflow_handle(task_workflow_id(req.run_id, "a"))
        await waiting_at(child, "step", TaskProgress)
        await refused(child, GateDecision(gate="result", task_id="a", decision="approve",
                                          by="ada"))
        await run.signal("approve", GateDecision(gate="step", task_id="a", decision="approve",
                                                 by="ada"))
        return await run.result()


async def run_library_refusals(env: WorkflowEnvironment) -> str:
    """The skill library refuses an oversize and a malformed outcome, then takes a valid one.

    Returns:
        The library's workflow id.
    """
    queue = f"capture-{uuid.uuid4().hex[:8]}"
    outcome = TaskOutcome(run_id="run", task_id="t1", action="fit", status="completed")
    async with Worker(env.client, task_queue=queue, workflows=[SkillLibraryWorkflow]):
        library = await env.client.start_workflow(SkillLibraryWorkflow.run, LibraryState(),
                                                  id=library_id(queue), task_queue=queue)
        await library.signal(TASK_FINISHED, outcome.model_copy(
            update={"action": "x" * (OUTCOME_MAX_BYTES + 1)}))
        await library.signal(TASK_FINISHED, {"run_id": "run"})
        await library.signal(TASK_FINISHED, outcome)

        async def taken() -> bool:
            state = await library.query(SkillLibraryWorkflow.state)
            return state["finished"] == 1 and state["refused"] == 2

        await wait_for(taken, timeout=30, what="the library to take the valid outcome")
        await library.terminate("captured")
    return library.id


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "refusals", await run_refusals(env, root))
        await save_one(env, "refusals.library", await run_library_refusals(env))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
