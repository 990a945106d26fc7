"""Capture the ``bounds`` histories: a task whose result is cut to fit, and its dependant.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.bounds``
captures this scenario alone (the other saved histories stay as they are). Task ``many``
leaves 150 declared artifacts: it writes its whole result (``write_task_report``) and returns
one listing 100 of them; ``after`` gets those 100 and completes. The run returns each task's
status and reason only.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.sandbox.artifacts import store_artifacts
from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.contracts.execution import Artifact, ExecuteJobInput, ExecutionOutcome
from workflows.contracts.results import ResearchResult

FILES = 150
NAMES = [f"out/part-{i:03d}.txt" for i in range(FILES)]


def sandbox(root: Path) -> Callable[[ExecuteJobInput], Awaitable[ExecutionOutcome]]:
    """An ``execute_job`` whose job for ``many`` leaves :data:`FILES` files, others one."""

    async def execute(req: ExecuteJobInput) -> ExecutionOutcome:
        workspace = root / req.run_id / req.task_id / "attempt-1"
        (workspace / "out").mkdir(parents=True)
        artifacts: list[Artifact] = []
        for name in req.job.expected_artifacts:
            path = workspace / name
            path.write_text(f"{req.task_id} {name}\n")
            artifacts.append(Artifact(name=name, size=path.stat().st_size, path=str(path),
                                      sha256=hashlib.sha256(path.read_bytes()).hexdigest()))
        store_artifacts(LocalArtifactStore(root.parent / "store"), artifacts)  # the harness's
        return ExecutionOutcome(outcome="succeeded", exit_code=0, artifacts=artifacts,
                                metrics={"score": 0.9}, workspace=str(workspace))

    return execute


async def run_bounds(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The bounds scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"execute_job": sandbox(root / "work")})
    many, after = task("many"), task("after", deps=["many"])
    many["job"]["expected_artifacts"] = NAMES
    after["job"]["expected_artifacts"] = ["out/part-000.txt"]
    await harness.run([many, after])
    assert harness.result is not None
    return harness.result


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "bounds", await run_bounds(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
