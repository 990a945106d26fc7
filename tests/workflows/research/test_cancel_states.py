"""``assay cancel`` ends a run whatever it waits for, on the time-skipping server.

A run waiting at its plan gate, for a person's plan, or at the ``branch`` gate where a person
chooses a line, ends cancelled at once when it is cancelled: the waiting gate is withdrawn
(rejected by ``cancel:WHO``), with the report written; a gate the run would open after the
cancel (the choice between cancelled branches) is withdrawn as it opens. Time is skipped
while a run waits, so a run that kept waiting would end only at its gate's timeout: each test
checks the run's own clock stopped well before it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.branches import approve_step
from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branch_siblings import result_of
from tests.workflows.research.test_branches import update
from tests.workflows.research.test_supply_plan import WAIT
from workflows.constants import branch_task_workflow_id
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import RunProgress, RunReport
from workflows.research.workflow import ResearchWorkflow

PROMPT = timedelta(hours=1)
"""A cancelled run ends within this much of its own time (every gate here waits days)."""


async def waiting(handle: WorkflowHandle[Any, Any], what: str) -> None:
    async def check() -> bool:
        progress = await handle.query("progress", result_type=RunProgress)
        return progress.waiting is not None or progress.status == "waiting"
    await wait_for(check, timeout=60, what=what)


async def cancelled(harness: Harness, handle: WorkflowHandle[Any, Any]) -> RunReport:
    """Cancel the run; its report, checked to say cancelled and to have ended promptly."""
    await update(handle, "steer_run", {"action": "cancel", "by": "ada"})
    result = await result_of(handle)
    report = harness.report_of(result)
    assert report.status == "cancelled", report.status_reason
    assert report.finished_at - report.started_at < PROMPT, "the run waited on after a cancel"
    return report


def withdrawn(gates: list[GateRecord], kind: str) -> None:
    [gate] = [g for g in gates if g.gate == kind]
    assert (gate.status, gate.by) == ("rejected", "cancel:ada"), gate
    assert gate.comment == "withdrawn: the run was cancelled"


async def test_cancel_ends_a_run_waiting_at_its_plan_gate(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a"), task("b", deps=["a"])],
                             gates={"plan": {"human": True, "timeout_s": 7 * 86_400}})
        await waiting(handle, "the plan gate to open")
        report = await cancelled(harness, handle)
    withdrawn(report.gates, "plan")
    assert {t.task_id: t.status for t in report.tasks} == {"a": "cancelled", "b": "cancelled"}
    assert harness.sandbox.ran == []


async def test_cancel_ends_a_run_waiting_for_a_persons_plan(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.goal_request("Do petal widths differ by species?",
                               gates={"plan": {"timeout_s": 7 * 86_400}}, **WAIT)
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=task_queue)
        await waiting(handle, "the run to wait for a plan")
        report = await cancelled(harness, handle)
    assert "the run was cancelled while it waited for a plan" in report.status_reason


async def test_cancel_ends_a_run_waiting_at_the_branch_gate(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    second = task("2", deps=["1"], score=0.5)
    second["branches"] = [{"name": "high", "kind": "optimisation", "set": {"args.score": 0.9}}]
    async with harness.worker():
        handle = await start(harness, [task("1"), second],
                             branching={"selection": "person",
                                        "metric": {"name": "score", "direction": "maximize"}},
                             gates={"branch": {"timeout_s": 7 * 86_400}})
        await waiting(handle, "the branch gate to open")
        report = await cancelled(harness, handle)
    withdrawn(report.gates, "branch")
    assert report.branches is not None and report.branches.kept == {"2:planned#1": "main"}
    assert {t.task_id: t.branch for t in report.tasks} == {"1": None, "2": None}


async def test_cancel_while_branches_run_opens_no_branch_gate_afterwards(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """The cancelled branches' group is decided without asking anyone: the main line."""
    harness = Harness(time_env, task_queue, tmp_path)
    second = task("2", deps=["1"], score=0.5)
    second["branches"] = [{"name": "high", "kind": "optimisation", "set": {"args.score": 0.9}}]
    async with harness.worker():
        handle = await start(harness, [task("1"), second],
                             branching={"selection": "person",
                                        "metric": {"name": "score", "direction": "maximize"}},
                             gates={"step": {"human": True},
                                    "branch": {"timeout_s": 7 * 86_400}})
        await approve_step(time_env, handle, "1")
        await task_gate_waiting(time_env.client.get_workflow_handle(
            branch_task_workflow_id(handle.id, "high", "2")), "step")
        report = await cancelled(harness, handle)
    withdrawn(report.gates, "branch")
    assert report.branches is not None
    assert [b.status for b in report.branches.branches] == ["cancelled"]
    assert report.branches.kept == {"2:planned#1": "main"}
