"""A human ``result`` gate holds a run open after its tasks, for branches, until it is
closed or the gate's own timeout passes (time-skipping server)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from tests.workflows.common.test_gates import start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import until_open, update
from workflows.constants import task_workflow_id
from workflows.contracts.branches import BranchTree
from workflows.contracts.gates import GateDecision

TIMEOUT_S = 900.0
GATE: dict[str, Any] = {"human": True, "timeout_s": TIMEOUT_S, "on_timeout": "approve"}


async def held_open(harness: Harness) -> WorkflowHandle[Any, Any]:
    """A one-task run with a human result gate, its gate approved and the run held open."""
    handle = await start(harness, [task("a")], gates={"result": GATE})
    await approve_result(harness, handle.id)
    await until_open(handle)
    return handle


async def approve_result(harness: Harness, run_id: str) -> None:
    child = harness.env.client.get_workflow_handle(task_workflow_id(run_id, "a"))
    await task_gate_waiting(child, "result")
    await child.execute_update(  # pyright: ignore[reportUnknownMemberType]
        "decide", GateDecision(gate="result", task_id="a", decision="approve", by="ada"),
        result_type=dict)


async def test_a_result_gate_holds_the_run_open_until_it_is_closed(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await held_open(harness)
        tree = await update(handle, "steer_run", {"action": "close", "by": "ada"})
        (steered,) = tree.steering  # who, through which channel (none named: temporal), when
        assert steered.startswith("ada: close [via temporal, ") and steered.endswith(" UTC]")
        result = await handle.result()
    assert result.status == "completed"
    report = harness.report_of(result)
    assert report.finished_at - report.started_at < timedelta(seconds=TIMEOUT_S)


async def test_a_result_gate_hold_ends_at_the_gates_timeout(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await held_open(harness)
        result = await handle.result()  # nobody closes it: the held run waits out the gate
        tree = await handle.query("branches", result_type=BranchTree)
    assert result.status == "completed" and tree.steering == []
    report = harness.report_of(result)
    held = report.finished_at - report.started_at
    assert timedelta(seconds=TIMEOUT_S) <= held < timedelta(days=1), held
