"""A sweep of N branches from a checkpoint, and the sizes of the histories it leaves.

Shared by the history-bound test (``test_branch_history.py``) and ``make bench`` (section 9):
a held-open run of three tasks (1 -> 2 -> 3) on the workflow tests' harness (real workflows,
reviewers and verifier; the fake sandbox), ``N`` branches started from task 2's ``execute``
checkpoint by one ``start_branches`` update, then ``close``. The figures are read from the
histories the server kept: the run's own and every branch's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.constants import branch_workflow_id
from workflows.contracts.branches import BranchTree
from workflows.contracts.results import RunProgress
from workflows.research.workflow import ResearchWorkflow

PLAN = [task("1"), task("2", deps=["1"], score=0.5), task("3", deps=["2"])]
HOLD: dict[str, Any] = {"branching": {"hold_open": True,
                                      "metric": {"name": "score", "direction": "maximize"}}}
HISTORY_LIMIT_BYTES = 50 * 1024 * 1024
HISTORY_LIMIT_EVENTS = 51_200
PAYLOAD_LIMIT_BYTES = 2 * 1024 * 1024
"""Temporal's hard limits: a history's size and length, and one payload (blob)."""


@dataclass(frozen=True)
class HistorySize:
    """One workflow's history: events, bytes and its largest event."""

    events: int
    bytes: int
    largest_event: int

    @classmethod
    def of(cls, history: WorkflowHistory) -> HistorySize:
        """The size of ``history`` as the server sent it."""
        sizes = [e.ByteSize() for e in history.events]
        return cls(events=len(sizes), bytes=sum(sizes), largest_event=max(sizes, default=0))


@dataclass(frozen=True)
class SweepHistory:
    """The histories of one swept run: the run's own and its largest branch's."""

    branches: int
    run: HistorySize
    largest_branch: HistorySize | None
    status: str


def sweep_request(branches: int) -> dict[str, Any]:
    """A ``start_branches`` request of ``branches`` branches from task 2's execute checkpoint."""
    return {"from_task": "2", "from_phase": "execute", "by": "bench",
            "branches": [{"name": f"s-{i:02d}", "kind": "optimisation",
                          "set": {"args.score": round(0.01 * (i + 1), 2)}}
                         for i in range(branches)]}


async def _update(handle: WorkflowHandle[Any, Any], name: str, arg: Any) -> BranchTree:
    return await handle.execute_update(name, arg,  # pyright: ignore[reportUnknownMemberType]
                                       result_type=BranchTree)


async def sweep(env: WorkflowEnvironment, queue: str, root: Path, branches: int) -> SweepHistory:
    """Run the plan held open, sweep ``branches`` branches (0: none), close; measure."""
    harness = Harness(env, queue, root)
    req = harness.request(PLAN, **HOLD)
    async with harness.worker():
        handle = await env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                 task_queue=queue)

        async def is_open() -> bool:
            return (await handle.query("progress", result_type=RunProgress)).phase == "open"

        await wait_for(is_open, timeout=60, what="the run to be held open")
        if branches:
            await _update(handle, "start_branches", sweep_request(branches))
        await _update(handle, "steer_run", {"action": "close", "by": "bench"})
        result = await handle.result()
    names = [f"s-{i:02d}" for i in range(branches)]
    largest: HistorySize | None = None
    for name in names:
        size = HistorySize.of(await env.client.get_workflow_handle(
            branch_workflow_id(req.run_id, name)).fetch_history())
        largest = size if largest is None or size.bytes > largest.bytes else largest
    return SweepHistory(branches=branches, run=HistorySize.of(await handle.fetch_history()),
                        largest_branch=largest, status=result.status)
