"""Capture the ``study`` histories: a study across a continue-as-new boundary.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.study``
captures this scenario alone. Cycle 1 refutes H1 (score 0.5 of 0.8) and the rules pivot to
H2; a person confirms at the ``cycle`` gate after a refused choice; the study continues as
new; cycle 2 supports H2 (0.95) and meets the acceptance criterion, and the rules stop.
``study_cancelled``: a study cancelled by Temporal while its cycle waits at a step gate.
Saved: both executions of the study (``study.study-1``, ending in continue-as-new, and
``study.study-2``) and both cycles' runs. The scenario queries the study while its last gate
settles; the query reaches it during the flush after the gate (a local activity), so the
study ends in a workflow task of its own, the path patch ``study-patches-first`` guards
(``tests/workflows/test_replay.py`` checks the saved history holds it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.common.test_gates import task_gate_waiting
from tests.workflows.study.test_study_workflow import ACCEPT, H1, H2, Study, cycle_plan
from workflows.constants import cycle_run_id, task_workflow_id
from workflows.contracts.policy import GateRule


async def run_study(env: WorkflowEnvironment, root: Path) -> tuple[str, str]:
    """The study scenario; its id and its first execution's run id."""
    study = Study(env, "capture-study", root)
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    async with study.harness.worker():
        handle = await study.start(inp)
        for _ in range(2):
            await study.until(handle, "the cycle gate", lambda p: p.waiting is not None)
            await handle.signal("approve", {"gate": "cycle", "decision": "approve",
                                            "by": "ada", "choice": "pivot:H9"})
            await handle.signal("approve", {"gate": "cycle", "decision": "approve",
                                            "by": "ada"})
            await study.until(handle, "the gate to settle", lambda p: p.waiting is None)
        result = await handle.result()
    assert (result.status, result.cycles) == ("completed", 2), result
    assert result.decision is not None and result.decision.action == "stop"
    assert study.first_run is not None
    return inp.state.study_id, study.first_run


async def save_study(env: WorkflowEnvironment, study_id: str, first_run: str) -> None:
    """Write both executions of the study and its cycles' runs."""
    from tests.histories.capture.all import save_one

    await save_one(env, "study.study-1", study_id, first_run)
    await save_one(env, "study.study-2", study_id)
    for cycle in (1, 2):
        await save_one(env, f"study.research-cycle-{cycle}", cycle_run_id(study_id, cycle))


async def run_cancelled_study(env: WorkflowEnvironment, root: Path) -> str:
    """A study cancelled by Temporal while its cycle's task waits at a step gate; its id."""
    study = Study(env, "capture-study-cancel", root)
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2)], **ACCEPT)
    inp = inp.model_copy(update={"policy": inp.policy.model_copy(update={
        "gates": inp.policy.gates.model_copy(update={"step": GateRule(human=True)})})})
    async with study.harness.worker():
        handle = await study.start(inp)
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(cycle_run_id(inp.state.study_id, 1), "fit1")), "step")
        await handle.cancel()
        try:
            await handle.result()
        except WorkflowFailureError as ended:
            assert isinstance(ended.cause, CancelledError), ended.cause
        else:
            raise AssertionError("a cancelled study ends cancelled")
    assert [w.status for w in study.reports.written] == ["cancelled"]
    return inp.state.study_id


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""

    from tests.histories.capture.all import save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save_study(env, *await run_study(env, root))
        cancelled = root / "cancelled"
        cancelled.mkdir()
        await save_one(env, "study_cancelled.study-1", await run_cancelled_study(env, cancelled))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
