"""A deliberately incompatible TaskWorkflow, to prove the replay guard can fail."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.results import TaskInput


@workflow.defn(name="TaskWorkflow")
class ReorderedTaskWorkflow:
    """TaskWorkflow with its first activity swapped: an incompatible change."""

    @workflow.run
    async def run(self, task: TaskInput) -> None:
        await workflow.execute_activity("verify_evidence", task,
                                        start_to_close_timeout=timedelta(seconds=5))
