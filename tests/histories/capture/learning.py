"""Capture the ``learning`` histories: a task that hands its outcome to the learner.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.learning``
captures this scenario alone (the other saved histories stay as they are; ``… learning
memory_batches`` saves it as ``memory_batches``, the path of patch ``batched-memory``, where
the library hands memory its outcomes with ``remember_tasks``). A two-task run with memory and
skill reports on: each task ends with the real ``hand_off_outcome`` local activity, which
starts the library workflow on the first outcome; the library hands memory each outcome's
part (``remember_task``, or ``remember_tasks`` past the patch) and records
nothing else (no skill was used).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.learning.handoff import Learner
from activities.learning.settle import wait_learned
from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.results import ResearchResult
from workflows.contracts.skills import library_id
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow


async def run_learning(env: WorkflowEnvironment, root: Path) -> tuple[ResearchResult, str]:
    """The run and the id of the library that learned from it (terminated once it had)."""
    from tests.histories.capture.all import record_outcomes, remember_task, remember_tasks

    queue = f"capture-{uuid.uuid4().hex[:8]}"
    harness = Harness(env, queue, root, overrides={
        "remember_task": remember_task, "remember_tasks": remember_tasks,
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[record_outcomes], workflows=[SkillLibraryWorkflow])
    req = harness.request([task("a"), task("b", deps=["a"])], skills={"enabled": True})
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=queue)
        keys = [f"{req.run_id}/{t.task_id}" for t in result.tasks]
        assert await wait_learned(env.client, queue, keys) == []
        await env.client.get_workflow_handle(library_id(queue)).terminate()
    assert result.status == "completed"
    return result, library_id(queue)


async def capture_alone(name: str = "learning") -> None:
    """Run this scenario alone and save its histories as ``name``."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        result, library = await run_learning(env, root)
        await save(env, name, result)
        await save_one(env, f"{name}.library", library)

    await alone(scenario)


if __name__ == "__main__":
    import sys

    asyncio.run(capture_alone(*sys.argv[1:2]))
