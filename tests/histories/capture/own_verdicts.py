"""Capture the ``own_verdicts`` history: an ended study keeps a parent's own verdict.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.own_verdicts``
captures this scenario alone (the other saved histories stay as they are). A study whose
first cycle tests its root H0 on a metric its task does not report (H0 inconclusive), whose
second cycle supports H0's child H1 and meets the acceptance criterion; at its end H0 stays
inconclusive (``own-test-verdicts``), where studies before the patch marked it supported.
Saved: the study's second execution (``own_verdicts.study-2``), which ends it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.study.test_study_workflow import ACCEPT, H1, Study, cycle_plan
from workflows.contracts.cycles import StudyReportInput

ROOT: dict[str, Any] = {"id": "H0", "statement": "a model reaches an auc of 0.8", "test": {
    "metric": "auc", "op": ">=", "threshold": 0.8}}
"""Tested in cycle 1 by a task that reports ``score`` only: inconclusive."""
CHILD: dict[str, Any] = {**H1, "parent": "H0"}


async def run_own_verdicts(env: WorkflowEnvironment, root: Path,
                           queue: str = "capture-own-verdicts") -> tuple[str, StudyReportInput]:
    """The study (its root tested inconclusive, its child supported); its id and last report."""
    study = Study(env, queue, root)
    inp = study.input([cycle_plan(1, 0.5, "H0", ROOT, CHILD),
                       cycle_plan(2, 0.95, "H1", CHILD)], **ACCEPT)
    async with study.harness.worker():
        result = await (await study.start(inp)).result()
    assert (result.status, result.cycles) == ("completed", 2), result.reason
    return inp.state.study_id, study.reports.written[-1]


async def capture_alone() -> None:
    """Run this scenario alone and save its history."""
    from tests.histories.capture.all import save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        study_id, _ = await run_own_verdicts(env, root)
        await save_one(env, "own_verdicts.study-2", study_id)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
