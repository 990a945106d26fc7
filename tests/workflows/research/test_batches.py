"""A large run runs its tasks in batches, each a child workflow, and works as any run.

``policy.batch_tasks`` makes a small plan run in batches, so each behaviour is checked in
seconds; the 10 000-task run at the end is the real size (``slow``: ``make test`` runs it,
``make test-fast`` does not).
"""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from workflows.constants import batch_workflow_id, task_workflow_id


async def test_a_plan_runs_in_batches_with_dependencies_across_them(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task("a"), task("b", deps=["a"]), task("c", behave="crash"),
            task("d", deps=["c"]), task("e", deps=["a", "b"])]
    report = await harness.run(plan, batch_tasks=2, max_parallel=2)
    statuses = {t.task_id: t.status for t in report.tasks}
    assert statuses == {"a": "completed", "b": "completed", "c": "failed", "d": "blocked",
                        "e": "completed"}
    assert "blocked by task c" in next(t for t in report.tasks if t.task_id == "d").status_reason
    assert harness.sandbox.deps_seen["e"] == ["a/out.txt", "b/out.txt"]  # across batches
    run_id = report.run_id
    for number in (1, 2, 3):
        described = await time_env.client.get_workflow_handle(
            batch_workflow_id(run_id, number)).describe()
        assert described.status is not None and described.status.name == "COMPLETED"
    parent = await time_env.client.get_workflow_handle(
        task_workflow_id(run_id, "e")).describe()
    assert parent.parent_id == batch_workflow_id(run_id, 3)
