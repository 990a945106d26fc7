"""Deliberately incompatible workflows: a TaskWorkflow that proves the replay guard can fail,
and a ResearchWorkflow that plays a new version of the workflow code in the upgrade test."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.results import ResearchInput, TaskInput


@workflow.defn(name="TaskWorkflow")
class ReorderedTaskWorkflow:
    """TaskWorkflow with its first activity swapped: an incompatible change."""

    @workflow.run
    async def run(self, task: TaskInput) -> None:
        await workflow.execute_activity("verify_evidence", task,
                                        start_to_close_timeout=timedelta(seconds=5))


@workflow.defn(name="ResearchWorkflow")
class TimerFirstResearchWorkflow:
    """A ResearchWorkflow whose first command is a timer: a run begun by the real one cannot
    replay on it, so a worker serving it is a new, incompatible version."""

    @workflow.run
    async def run(self, req: ResearchInput) -> str:
        await workflow.sleep(timedelta(milliseconds=10))
        return f"v2 ran {req.run_id}"
