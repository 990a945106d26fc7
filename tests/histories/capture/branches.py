"""Capture the branch and steering histories: branched, steered, cancelled, withdrawn.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.branches``
captures these four scenarios alone (the other saved histories stay as they are). Each
asserts how its run ended, so a capture that goes wrong fails instead of saving a history of
something else.

- ``branched``: a three-task plan held open; a sweep of two branches from task 2's ``execute``
  checkpoint and one branch from its ``planned`` checkpoint (a second group), then ``close``.
  The comparator keeps ``high`` (score 0.95) by ``best``; the later group keeps the main line,
  which by then is ``high``'s. Saved: the run, its three tasks, each branch and its tasks.
- ``steered``: two tasks with a human step gate. The run is paused by the ``steer`` signal
  while task ``a`` waits at its gate; ``a``'s job is modified at the gate (a change the
  guardrails refuse first) and runs; ``b`` does not start until ``steer_run`` resumes the run.
- ``cancelled``: a run held open with two branches whose tasks wait at their step gates;
  ``steer_run`` cancels it: the branches' tasks are cancelled, each branch ends ``cancelled``,
  the run ends ``cancelled`` and its report is written.
- ``withdrawn``: the same run cancelled by Temporal (``temporal workflow cancel``) instead:
  it winds its tasks and branches down alike, writes its report and ends cancelled.
- ``tied``: the branched plan whose task 2 writes its score as an estimate (± 0.1); a sweep of
  two branches within that interval ties with the main line, and the ``simplest`` rule keeps
  the main line.
- ``held``: a one-task run with a human ``result`` gate: the gate approved, the run is held
  open for branches, then closed.
- ``checkpointed``: two tasks with human step gates, held open. ``ada`` names the checkpoint
  ``before-b`` while ``b`` waits at its gate (each approved gate names its own,
  ``approval:step:TASK``: the ``named-checkpoints`` patch); branch ``alt`` starts from
  ``before-b`` (task ``b``, reusing ``a``) and completes; then ``close``.
- ``periodic``: three tasks in a chain, each step gate timing out after an hour (approved),
  with ``checkpoint_every_min`` 50: each task's end names ``periodic:1``, ``periodic:2``,
  ``periodic:3`` (the intervals passed by then).

``python -m tests.histories.capture.branches held`` captures the named scenarios only.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import until, update
from tests.workflows.research.test_result_hold import held_open
from workflows.constants import branch_task_workflow_id, task_workflow_id
from workflows.contracts.branches import BranchTree
from workflows.contracts.results import ResearchResult, RunProgress, RunReport

PLAN = [task("1"), task("2", deps=["1"], score=0.5), task("3", deps=["2"])]
HOLD: dict[str, Any] = {"hold_open": True, "metric": {"name": "score", "direction": "maximize"}}
STEP = {"step": {"human": True}}


def branches(phase: str, **scores: float) -> dict[str, Any]:
    """A request by ``ada`` for branches from task 2 at ``phase``, named by their score."""
    return {"from_task": "2", "from_phase": phase, "by": "ada", "branches": [
        {"name": name, "kind": "optimisation", "set": {"args.score": s}}
        for name, s in scores.items()]}


async def approve_step(env: WorkflowEnvironment, run: WorkflowHandle[Any, Any], task_id: str,
                       branch: str | None = None) -> None:
    """Approve ``task_id``'s step gate (in ``branch``'s line) once it waits."""
    run_id = run.id
    wf_id = (branch_task_workflow_id(run_id, branch, task_id) if branch
             else task_workflow_id(run_id, task_id))
    await task_gate_waiting(env.client.get_workflow_handle(wf_id), "step")
    await run.signal("approve", {"gate": "step", "task_id": task_id, "branch": branch,
                                 "decision": "approve", "by": "ada"})


async def run_branched(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The branched scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await start(harness, PLAN, branching=HOLD)
        await until(run, lambda p: p.phase == "open", "the run to be held open")
        tree = await update(run, "start_branches", branches("execute", low=0.2, high=0.95))
        assert [b.reused for b in tree.branches] == [["1"], ["1"]], tree
        tree = await update(run, "start_branches", branches("planned", fresh=0.8))
        assert [b.from_phase for b in tree.branches] == ["planned"]  # what it started
        tree = await run.query("branches", result_type=BranchTree)
        assert [b.from_phase for b in tree.branches] == ["execute", "execute", "planned"]
        await update(run, "steer_run", {"action": "close", "by": "ada"})
        result = await run.result()
    assert result.status == "completed", result.model_dump_json(indent=1)
    assert result.branches is not None
    by_name = {b.name: b for b in result.branches.branches}
    assert {n: b.status for n, b in by_name.items()} == dict.fromkeys(
        ["low", "high", "fresh"], "completed")
    assert [n for n, b in by_name.items() if b.selected] == ["high"], result.branches
    assert sorted(harness.sandbox.ran) == sorted(
        ["1", "2", "3", *(f"{t}.branch-{n}" for n in by_name for t in ("2", "3"))])
    second = {t.task_id: t for t in harness.report_of(result).tasks}["2"]
    assert second.branch == "high" and second.metrics["score"] == 0.95
    return result


async def run_tied(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The tied scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    plan = [task("1"), task("2", deps=["1"], score=0.5, ci=0.1), task("3", deps=["2"])]
    async with harness.worker():
        run = await start(harness, plan, branching=HOLD)
        await until(run, lambda p: p.phase == "open", "the run to be held open")
        await update(run, "start_branches", branches("execute", low=0.52, high=0.55))
        await update(run, "steer_run", {"action": "close", "by": "ada"})
        result = await run.result()
    assert result.status == "completed", result.model_dump_json(indent=1)
    assert result.branches is not None
    assert list(result.branches.tied.values()) == [["high", "low", "main"]], result.branches
    assert list(result.branches.kept.values()) == ["main"], result.branches
    return result


async def run_steered(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The steered scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await start(harness, [task("a", score=0.5), task("b", deps=["a"])], gates=STEP)
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(run.id, "a")), "step")
        await run.signal("steer", {"action": "pause", "by": "ada", "comment": "a look first"})

        async def paused() -> bool:
            return (await run.query("branches", result_type=BranchTree)).paused
        await wait_for(paused, timeout=60, what="the run to pause")
        for change in ({"args.url": "http://elsewhere"}, {"args.score": 0.4}):
            await run.signal("approve", {"gate": "step", "task_id": "a", "decision": "modify",
                                         "set": change, "by": "ada"})
        await until(run, lambda p: p.tasks.get("a") == "completed", "task a to complete")
        progress = await run.query("progress", result_type=RunProgress)
        assert progress.tasks["b"] == "pending", "nothing starts while the run is paused"
        tree = await update(run, "steer_run", {"action": "resume", "by": "bo"})
        assert [s.split(" [via ")[0] for s in tree.steering] == [
            "ada: pause (a look first)", "bo: resume"], tree.steering
        await approve_step(env, run, "b")
        result = await run.result()
    assert result.status == "completed", result.model_dump_json(indent=1)
    report = harness.report_of(result)
    first = report.tasks[0]
    assert first.metrics["score"] == 0.4 and first.provenance.approvals[0].status == "modified"
    assert harness.sandbox.ran == ["a", "b"]
    return result


async def held_with_branches(env: WorkflowEnvironment, harness: Harness,
                             ) -> WorkflowHandle[Any, Any]:
    """A run held open whose two branches' tasks wait at their step gates."""
    run = await start(harness, PLAN, branching=HOLD, gates=STEP)
    for tid in ("1", "2", "3"):
        await approve_step(env, run, tid)
    await until(run, lambda p: p.phase == "open", "the run to be held open")
    await update(run, "start_branches", branches("execute", low=0.2, high=0.95))
    for name in ("low", "high"):
        await task_gate_waiting(env.client.get_workflow_handle(
            branch_task_workflow_id(run.id, name, "2")), "step")
    return run


def check_cancelled(harness: Harness, report: RunReport) -> None:
    """The main line's tasks completed; each branch and its tasks ended cancelled."""
    assert report.status == "cancelled", report.model_dump_json(indent=1)
    assert {t.task_id: t.status for t in report.tasks} == dict.fromkeys(["1", "2", "3"],
                                                                          "completed")
    assert report.branches is not None and len(report.branches.branches) == 2
    for branch in report.branches.branches:
        assert branch.status == "cancelled" and not branch.selected, branch
        assert branch.tasks == {"2": "cancelled", "3": "cancelled"}, branch.tasks
    assert sorted(harness.sandbox.ran) == ["1", "2", "3"]


def cancelled_report(harness: Harness, run_id: str) -> RunReport:
    """The report a cancelled run wrote, checked (see :func:`check_cancelled`)."""
    written = harness.reports.last
    assert written is not None and written.report.run_id == run_id, "the report is written"
    check_cancelled(harness, written.report)
    return written.report


async def run_cancelled(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The cancelled scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await held_with_branches(env, harness)
        await update(run, "steer_run", {"action": "cancel", "by": "ada", "comment": "enough"})
        result = await run.result()
    assert result.status == "cancelled", result.model_dump_json(indent=1)
    return cancelled_report(harness, run.id)


async def run_withdrawn(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The withdrawn scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await held_with_branches(env, harness)
        await run.cancel()
        try:
            await run.result()
        except WorkflowFailureError as ended:
            assert isinstance(ended.cause, CancelledError), ended.cause
        else:
            raise AssertionError("a run cancelled by Temporal ends cancelled")
    return cancelled_report(harness, run.id)


async def run_held(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The held scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await held_open(harness)
        await update(run, "steer_run", {"action": "close", "by": "ada"})
        result = await run.result()
    assert result.status == "completed", result
    return result


async def run_checkpointed(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The checkpointed scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await start(harness, [task("a"), task("b", deps=["a"], score=0.5)],
                          branching=HOLD, gates=STEP)
        await approve_step(env, run, "a")
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(run.id, "b")), "step")
        await run.execute_update("checkpoint", {  # pyright: ignore[reportUnknownMemberType]
            "name": "before-b", "by": "ada"})
        await approve_step(env, run, "b")
        await until(run, lambda p: p.phase == "open", "the run to be held open")
        tree = await update(run, "start_branches", {
            "from_task": "b", "from_checkpoint": "before-b", "by": "ada",
            "branches": [{"name": "alt", "set": {"args.score": 0.9}}]})
        assert tree.branches[0].reused == ["a"], tree
        await approve_step(env, run, "b", branch="alt")
        await until(run, lambda p: p.phase == "open", "the run to stay open")
        await update(run, "steer_run", {"action": "close", "by": "ada"})
        result = await run.result()
    assert result.status == "completed", result
    assert result.branches is not None and result.branches.branches[0].status == "completed"
    return result


PERIODIC: dict[str, Any] = {"checkpoint_every_min": 50, "gates": {"step": {
    "human": True, "timeout_s": 3600, "on_timeout": "approve"}}}
"""Each task waits an hour at its step gate (time the server skips), then goes on."""


async def run_periodic(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The periodic scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        run = await start(harness, [task("a"), task("b", deps=["a"]), task("c", deps=["b"])],
                          **PERIODIC)
        result = await run.result()
    assert result.status == "completed", result
    return result


SCENARIOS: dict[str, Callable[[WorkflowEnvironment, Path],
                              Awaitable[ResearchResult | RunReport]]] = {
    "branched": run_branched, "steered": run_steered, "cancelled": run_cancelled,
    "withdrawn": run_withdrawn, "held": run_held, "tied": run_tied,
    "checkpointed": run_checkpointed, "periodic": run_periodic}


async def capture_alone(names: list[str] | None = None) -> None:
    """Run these scenarios (or the ``names`` of some) alone and save their histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        runs: list[tuple[str, ResearchResult | RunReport]] = []
        for name, run in SCENARIOS.items():
            if names and name not in names:
                continue
            folder = root / name
            folder.mkdir()
            runs.append((name, await run(env, folder)))
        for name, result in runs:
            await save(env, name, result)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone(sys.argv[1:]))
