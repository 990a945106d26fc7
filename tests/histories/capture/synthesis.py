"""Capture the ``synthesis`` histories: an ended study asks the study synthesizer.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.synthesis``
captures this scenario alone (the other saved histories stay as they are). ``synthesis``: a
study with a model whose one cycle meets its acceptance criterion; the study synthesizer
answers before the final report. ``synthesis_cancelled``: a study whose first cycle pivots,
cancelled while its second cycle's task waits at a step gate; the synthesizer is still asked,
from the first cycle's record, before the report.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.agents_fakes import FakeAgents, probe_environment
from tests.workflows.common.test_gates import task_gate_waiting
from tests.workflows.study.test_study_synthesis import ANSWER, with_model
from tests.workflows.study.test_study_workflow import ACCEPT, H1, H2, Study, cycle_plan
from workflows.constants import cycle_run_id, task_workflow_id
from workflows.contracts.gates import GateDecision
from workflows.contracts.policy import GateRule


def synthesizing(env: WorkflowEnvironment, queue: str, root: Path) -> tuple[Study, FakeAgents]:
    """A study harness whose roles (the synthesizer's too) are scripted."""
    agents = FakeAgents(synthesis=ANSWER)
    return Study(env, queue, root, agents=agents.overrides(),
                 extra=[probe_environment]), agents


async def run_synthesis(env: WorkflowEnvironment, root: Path) -> str:
    """A study that meets its criterion and is synthesized; its id."""
    study, agents = synthesizing(env, "capture-synthesis", root)
    inp = with_model(study.input([cycle_plan(1, 0.95, "H1", H1)], **ACCEPT))
    async with study.harness.worker():
        result = await (await study.start(inp)).result()
    assert (result.status, result.cycles) == ("completed", 1), result.reason
    assert len(agents.requests["synthesize_study"]) == 1, agents.requests
    return inp.state.study_id


async def run_synthesis_cancelled(env: WorkflowEnvironment, root: Path) -> str:
    """A study cancelled during its cycle, still synthesized before its report; its id."""
    study, agents = synthesizing(env, "capture-synthesis-cancel", root)
    inp = with_model(study.input([cycle_plan(1, 0.5, "H1", H1, H2),
                                  cycle_plan(2, 0.95, "H2", H2)], **ACCEPT))
    inp = inp.model_copy(update={"policy": inp.policy.model_copy(update={
        "gates": inp.policy.gates.model_copy(update={"step": GateRule(human=True)})})})
    first = cycle_run_id(inp.state.study_id, 1)
    async with study.harness.worker():
        handle = await study.start(inp)
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(first, "fit1")), "step")
        await env.client.get_workflow_handle(first).signal("approve", GateDecision(
            gate="step", task_id="fit1", decision="approve", by="ada"))
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(cycle_run_id(inp.state.study_id, 2), "fit2")), "step")
        await handle.cancel()
        try:
            await handle.result()
        except WorkflowFailureError as ended:
            assert isinstance(ended.cause, CancelledError), ended.cause
        else:
            raise AssertionError("a cancelled study ends cancelled")
    assert "synthesize_study" in agents.requests, study.reports.written[-1].synthesis_note
    [asked] = agents.requests["synthesize_study"]
    assert asked.status == "cancelled", asked.status
    assert study.reports.written[-1].synthesis == ANSWER
    return inp.state.study_id


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save_one(env, "synthesis.study-1", await run_synthesis(env, root / "ended"))
        cancelled = await run_synthesis_cancelled(env, root / "cancelled")
        await save_one(env, "synthesis_cancelled.study-1", cancelled)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
