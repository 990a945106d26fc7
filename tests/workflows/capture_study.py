"""Capture the ``study`` histories: a study across a continue-as-new boundary.

Part of ``python -m tests.workflows.capture``; ``python -m tests.workflows.capture_study``
captures this scenario alone. Cycle 1 refutes H1 (score 0.5 of 0.8) and the rules pivot to
H2; a person confirms at the ``cycle`` gate after a refused choice; the study continues as
new; cycle 2 supports H2 (0.95) and meets the acceptance criterion, and the rules stop.
Saved: both executions of the study (``study.study-1``, ending in continue-as-new, and
``study.study-2``) and both cycles' runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import capture_alone as alone
from tests.workflows.study.test_study_workflow import ACCEPT, H1, H2, Study, cycle_plan
from workflows.constants import cycle_run_id


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
    from tests.workflows.capture import save_one

    await save_one(env, "study.study-1", study_id, first_run)
    await save_one(env, "study.study-2", study_id)
    for cycle in (1, 2):
        await save_one(env, f"study.research-cycle-{cycle}", cycle_run_id(study_id, cycle))


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save_study(env, *await run_study(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
