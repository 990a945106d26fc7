"""Capture the ``decisions`` histories: human decisions kept whole.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.decisions``
captures these scenarios alone (the other saved histories stay as they are).
``decisions``: a run whose task waits at a human ``result`` gate is sent a malformed decision
(``task`` for ``task_id``), refused and written at once; ``ada`` approves through the CLI's
channel, and closes the run it held open. ``decisions_study``: a study's ``cycle`` gate
refuses a malformed ``stop`` and an approver who is not one, then ``ada`` confirms the rules'
decision with a comment, sent as ``temporal`` sends it.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.histories.capture.refusals import waiting_at
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from tests.workflows.study.test_study_workflow import ACCEPT, H1, Study, cycle_plan
from workflows.constants import cycle_run_id, task_workflow_id
from workflows.contracts.branches import SteerRequest
from workflows.contracts.gates import GateDecision
from workflows.contracts.results import ResearchResult, TaskProgress
from workflows.research.workflow import ResearchWorkflow

GATES = {"result": {"human": True, "approvers": ["ada"]}}


async def run_decisions(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The decisions scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    req = harness.request([task("a")], gates=GATES)
    async with harness.worker():
        run = await env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                              task_queue=harness.queue)
        await waiting_at(env.client.get_workflow_handle(task_workflow_id(req.run_id, "a")),
                         "result", TaskProgress)
        await run.signal("approve", {"gate": "result", "decision": "approve", "by": "ada",
                                     "task": "a"})
        await run.signal("approve", GateDecision(gate="result", task_id="a", decision="approve",
                                                 by="ada", comment="looks right",
                                                 channel="cli"))

        async def held() -> bool:
            return (await run.query(ResearchWorkflow.progress)).phase == "open"
        await wait_for(held, timeout=30, what="the run held open")
        await run.signal("steer", SteerRequest(action="close", by="ada", channel="cli"))
        result = await run.result()
    assert result.status == "completed", result.status_reason
    return result


async def run_decisions_study(env: WorkflowEnvironment, root: Path) -> str:
    """The decisions_study scenario; the study's id."""
    study = Study(env, "capture-decisions-study", root)
    inp = study.input([cycle_plan(1, 0.95, "H1", H1)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    async with study.harness.worker():
        handle = await study.start(inp)
        await study.until(handle, "the cycle gate", lambda p: p.waiting is not None)
        await handle.signal("stop", {"by": "ada", "task": "x"})
        await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "eve"})
        await study.until(handle, "the refusals", lambda p: len(p.refused) == 2)
        await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "ada",
                                        "comment": "criteria met"})
        result = await handle.result()
    assert result.decision is not None and result.decision.person is not None, result
    return inp.state.study_id


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "decisions", await run_decisions(env, root))
        studies = root / "study"
        studies.mkdir()
        study_id = await run_decisions_study(env, studies)
        await save_one(env, "decisions_study.study-1", study_id)
        await save_one(env, "decisions_study.research-cycle-1", cycle_run_id(study_id, 1))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
