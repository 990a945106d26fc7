"""Branches a plan writes on a task whose siblings still run, on the time-skipping server.

The plan of the diabetes study: ``ridge`` (three branches) and ``ols`` both depend on
``split``, ``compare`` on both. Each branch of ``ridge`` runs ``ridge`` and ``compare`` and
reuses ``ols``, which is still running when ``ridge`` starts: the branches wait for it, then
run, and the run ends. Real workflows and reviewers; the fake sandbox scores a job by its
``score`` argument.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.branches import approve_step
from tests.workflows.common.test_gates import start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import refused, until, update
from workflows.constants import task_workflow_id
from workflows.contracts.branches import BranchTree
from workflows.contracts.results import ResearchResult

RESULT_WAIT_S = 60
"""How long a test waits for a run's result before it calls the run hung."""


def ridge_plan(*, ols_behave: str = "ok") -> list[dict[str, Any]]:
    """split -> ridge (three branches), ols -> compare."""
    ridge = task("ridge", deps=["split"], score=0.5)
    ridge["branches"] = [{"name": f"alpha-{s}", "kind": "optimisation",
                          "set": {"args.score": s}} for s in (0.2, 0.9, 0.6)]
    return [task("split"), task("ols", deps=["split"], behave=ols_behave, score=0.4), ridge,
            task("compare", deps=["ridge", "ols"])]


POLICY: dict[str, Any] = {"branching": {"metric": {"name": "score", "direction": "maximize"}}}


async def result_of(handle: Any) -> ResearchResult:
    """The run's result, or a failure naming the hang instead of waiting for ever."""
    try:
        return await asyncio.wait_for(handle.result(), RESULT_WAIT_S)
    except TimeoutError:
        progress = await handle.query("progress")
        raise AssertionError(f"the run hung: {progress}") from None


async def test_plan_branches_on_a_task_with_a_running_sibling_wait_for_it_and_run(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, ridge_plan(), **POLICY)
        result = await result_of(handle)
    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    report = harness.report_of(result)
    assert report.branches is not None
    by_name = {b.name: b for b in report.branches.branches}
    assert sorted(by_name) == ["alpha-0.2", "alpha-0.6", "alpha-0.9"]
    for branch in by_name.values():
        assert branch.status == "completed", branch
        assert branch.reused == ["ols", "split"], branch.reused
        assert branch.tasks == {"ridge": "completed", "compare": "completed"}
    assert [n for n, b in by_name.items() if b.selected] == ["alpha-0.9"]
    ran = sorted(harness.sandbox.ran)
    assert ran.count("ols") == 1 and ran.count("split") == 1, ran
    assert {f"compare.branch-{n}" for n in by_name} <= set(ran)


async def test_plan_branches_whose_reused_sibling_failed_still_end(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, ridge_plan(ols_behave="crash"), max_retries=0, **POLICY)
        result = await result_of(handle)
    statuses = {t.task_id: t.status for t in result.tasks}
    assert statuses["ols"].startswith("failed") and statuses["compare"] == "blocked", statuses
    report = harness.report_of(result)
    assert report.branches is not None and len(report.branches.branches) == 3
    for branch in report.branches.branches:
        assert branch.tasks["compare"] == "blocked", branch


async def test_cancel_ends_a_run_whose_branches_wait_for_a_sibling(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, ridge_plan(), gates={"step": {"human": True}}, **POLICY)
        await task_gate_waiting(time_env.client.get_workflow_handle(
            task_workflow_id(handle.id, "split")), "step")
        await handle.signal("approve", {"gate": "step", "task_id": "split",
                                        "decision": "approve", "by": "ada"})
        for tid in ("ridge", "ols"):
            await task_gate_waiting(time_env.client.get_workflow_handle(
                task_workflow_id(handle.id, tid)), "step")
        tree = await handle.query("branches", result_type=BranchTree)
        assert tree.branches == [], "the branches wait for ols"
        asked = await refused(handle, "start_branches", {
            "from_task": "ridge", "by": "ada",
            "branches": [{"name": "mine", "set": {"args.score": 0.7}}]})
        assert "the branch reuses tasks ols, which have not finished" in str(asked)
        await update(handle, "steer_run", {"action": "cancel", "by": "ada"})
        result = await result_of(handle)
        tree = await handle.query("branches", result_type=BranchTree)
    assert result.status == "cancelled", [(t.task_id, t.status_reason) for t in result.tasks]
    statuses = {t.task_id: t.status for t in result.tasks}
    assert statuses == {"split": "completed", "ols": "cancelled", "ridge": "cancelled",
                        "compare": "cancelled"}, statuses
    assert tree.branches == [], tree
    assert any("never started: the run was cancelled" in r for r in tree.refused), tree.refused
    assert harness.sandbox.ran == ["split"]


async def test_recovery_branches_wait_for_a_running_sibling_they_reuse(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """``t2`` fails while ``t3``, which the recovery branch reuses for ``t4``, waits at its
    step gate: the branch starts once ``t3`` has ended, and its line is kept."""
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task("t1"), task("t2", deps=["t1"], behave="crash"), task("t3", deps=["t1"]),
            task("t4", deps=["t2", "t3"])]
    async with harness.worker():
        handle = await start(harness, plan, max_retries=0, gates={"step": {"human": True}},
                             branching={"recover": [{"name": "fixed",
                                                     "set": {"args.behave": "ok"}}]})
        for tid in ("t1", "t2"):
            await approve_step(time_env, handle, tid)
        await until(handle, lambda p: p.tasks.get("t2", "").startswith("failed"), "t2 to fail")
        tree = await handle.query("branches", result_type=BranchTree)
        assert tree.branches == [] and tree.refused == [], "the branch waits for t3"
        await approve_step(time_env, handle, "t3")
        for tid in ("t2", "t4"):
            await approve_step(time_env, handle, tid, branch="fixed-t2")
        result = await result_of(handle)
    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    report = harness.report_of(result)
    assert report.branches is not None
    [branch] = report.branches.branches
    assert branch.selected and branch.reused == ["t1", "t3"], branch
    assert {t.task_id: t.branch for t in report.tasks} == {
        "t1": None, "t2": "fixed-t2", "t3": None, "t4": "fixed-t2"}
