"""Capture the ``siblings`` and ``gate_withdrawn`` histories: runs that cannot hang.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.unhung``
captures these scenarios alone (the other saved histories stay as they are).

- ``siblings``: ``ridge`` (one branch the plan writes) and ``ols`` both depend on ``split``,
  ``compare`` on both. The branch reuses ``ols``, still running when ``ridge`` starts: it
  waits for ``ols``, then runs ``ridge`` and ``compare``; the best line is kept. Saved: the
  run, its four tasks, the branch and its two tasks.
- ``gate_withdrawn``: a run waiting at its human plan gate is cancelled (``steer_run``): the
  gate is withdrawn, both tasks end cancelled unstarted and the report is written. Saved: the
  run (no task started).
- ``cancel_running``: a run whose first task waits at its human step gate is cancelled
  (``steer_run``): the run asks the task to cancel without waiting for the answer, the
  second task ends cancelled unstarted, the first cancelled.
  Saved: the run and its first task.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.common.test_gates import plan_gate_waiting, start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import update
from workflows.constants import task_workflow_id
from workflows.contracts.results import ResearchResult

SIBLINGS_POLICY = {"branching": {"metric": {"name": "score", "direction": "maximize"}}}


async def run_siblings(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The siblings scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    ridge = task("ridge", deps=["split"], score=0.5)
    ridge["branches"] = [{"name": "strong", "kind": "optimisation", "set": {"args.score": 0.9}}]
    plan = [task("split"), task("ols", deps=["split"], score=0.4), ridge,
            task("compare", deps=["ridge", "ols"])]
    async with harness.worker():
        result = await (await start(harness, plan, **SIBLINGS_POLICY)).result()
    assert result.status == "completed", result.model_dump_json(indent=1)
    assert result.branches is not None
    [branch] = result.branches.branches
    assert branch.selected and branch.reused == ["ols", "split"], branch
    return result


async def run_gate_withdrawn(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The gate_withdrawn scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        handle = await start(harness, [task("a"), task("b", deps=["a"])],
                             gates={"plan": {"human": True}})
        await plan_gate_waiting(handle)
        await update(handle, "steer_run", {"action": "cancel", "by": "ada"})
        result = await handle.result()
    assert result.status == "cancelled", result.model_dump_json(indent=1)
    assert [t.status for t in result.tasks] == ["cancelled", "cancelled"]
    return result


async def run_cancel_running(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The cancel_running scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    async with harness.worker():
        handle = await start(harness, [task("a"), task("b", deps=["a"])],
                             gates={"step": {"human": True}})
        await task_gate_waiting(env.client.get_workflow_handle(
            task_workflow_id(handle.id, "a")), "step")
        await update(handle, "steer_run", {"action": "cancel", "by": "ada"})
        result = await handle.result()
    assert result.status == "cancelled", result.model_dump_json(indent=1)
    assert [t.status for t in result.tasks] == ["cancelled", "cancelled"], result.tasks
    return result


async def save_unhung(env: WorkflowEnvironment, siblings: ResearchResult,
                      withdrawn: ResearchResult, running: ResearchResult) -> None:
    """Save the scenarios' histories (the withdrawn run's tasks never started, nor did the
    cancelled running run's second task)."""
    from tests.histories.capture.all import save, save_one

    await save(env, "siblings", siblings)
    await save_one(env, "gate_withdrawn.research", withdrawn.run_id)
    await save_one(env, "cancel_running.research", running.run_id)
    await save_one(env, "cancel_running.task-a", task_workflow_id(running.run_id, "a"))


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        for folder in ("siblings", "withdrawn", "running"):
            (root / folder).mkdir()
        siblings = await run_siblings(env, root / "siblings")
        withdrawn = await run_gate_withdrawn(env, root / "withdrawn")
        running = await run_cancel_running(env, root / "running")
        await save_unhung(env, siblings, withdrawn, running)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
