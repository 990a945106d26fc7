"""Capture the ``escalation`` history: a study whose fixes keep failing escalates to a pivot.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.escalation``
captures this scenario alone. Each cycle's one task (linked to H1) exits 1: cycle 1 and 2 are
decided ``fix``, cycle 3 escalates (its fixes of H1 failed twice: a ``pivot`` to H2 with
``escalated``, recorded as an ``escalated`` event), and the pivot's cycle 4, failing too,
stops the study for lack of progress. Saved: the third execution (``escalation.study-3``,
the one that escalates and continues as new).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.study.test_study_workflow import ACCEPT, Study, crashing_plan


async def run_escalation(env: WorkflowEnvironment, root: Path) -> tuple[str, str]:
    """The escalation scenario; the study's id and its third execution's run id."""
    study = Study(env, "capture-escalation", root)
    inp = study.input([crashing_plan(1, "H1"), crashing_plan(2, "H1"), crashing_plan(3, "H1"),
                       crashing_plan(4, "H2")], **ACCEPT)
    async with study.harness.worker():
        handle = await study.start(inp)
        result = await handle.result()
    assert (result.status, result.cycles) == ("completed", 4), result
    run_id = study.first_run
    for _ in range(2):  # the first execution continued as new into the second, then the third
        history = await env.client.get_workflow_handle(
            inp.state.study_id, run_id=run_id).fetch_history()
        attributes = history.events[-1].workflow_execution_continued_as_new_event_attributes
        run_id = attributes.new_execution_run_id
    assert run_id is not None
    return inp.state.study_id, run_id


async def save_escalation(env: WorkflowEnvironment, study_id: str, run_id: str) -> None:
    """Write the execution that escalates."""
    from tests.histories.capture.all import save_one

    await save_one(env, "escalation.study-3", study_id, run_id)


async def capture_alone() -> None:
    """Run this scenario alone and save its history."""

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save_escalation(env, *await run_escalation(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
