"""The structural floor: a bare workflow with the dispatch shape of a one-task Assay run.

Assay's design fixes the shape of a task's path on Temporal: the run starts the task as a
child workflow on the orchestration pool; memory is consulted on the reflection pool; three
reviewers run in parallel on the agents and sandbox pools; the job runs as a subprocess on the
sandbox pool and its evidence is verified there in a second activity; events and reports are
written by local activities. :class:`FloorWorkflow` makes exactly those dispatches with none
of Assay's code: each activity returns at once, the job activity starts ``python -c pass``,
and the local activities do nothing. What it costs on a server is what that shape costs
there; Assay's time above it is Assay's own.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

FLOOR_QUEUES = {name: f"bench-floor-{name}" for name in
                ("orchestration", "agents", "sandbox", "reflection")}
"""One task queue per pool the task's path crosses."""
LOCAL_CALLS = 9
"""Local activities of a one-task run (6 event flushes, the task's and the run's reports, the
hand-off to the learner), as the breakdown counts them."""


@dataclass
class FloorShape:
    """How many local activities the floor records, and whether the job starts a process."""

    local_calls: int = LOCAL_CALLS
    spawn: bool = True


@activity.defn(name="floor_noop")
async def floor_noop(step: str) -> str:
    """Return at once: a dispatch and nothing else."""
    return step


@activity.defn(name="floor_job")
async def floor_job(spawn: bool) -> int:
    """Start ``python -c pass`` (the least a job in a process costs) and wait for it."""
    if not spawn:
        return 0
    proc = await asyncio.create_subprocess_exec(sys.executable, "-S", "-c", "pass")
    return await proc.wait()


@activity.defn(name="floor_local")
async def floor_local(step: str) -> str:
    """A local activity that does nothing."""
    return step


def _remote(step: str, queue: str) -> asyncio.Future[str]:
    return workflow.start_activity(floor_noop, step, task_queue=FLOOR_QUEUES[queue],
                                   start_to_close_timeout=timedelta(seconds=30))


@workflow.defn(name="FloorTaskWorkflow")
class FloorTaskWorkflow:
    """A task's path: memory, three reviewers at once, the job, its verification."""

    @workflow.run
    async def run(self, shape: FloorShape) -> int:
        """Make the task's dispatches in Assay's order."""
        await _remote("consult memory", "reflection")
        await asyncio.gather(_remote("review ops", "agents"), _remote("review quality", "agents"),
                             _remote("review infrastructure", "sandbox"))
        code = await workflow.execute_activity(floor_job, shape.spawn,
                                               task_queue=FLOOR_QUEUES["sandbox"],
                                               start_to_close_timeout=timedelta(seconds=30))
        await _remote("verify evidence", "sandbox")
        for step in range(shape.local_calls // 2):
            await workflow.execute_local_activity(floor_local, f"task {step}",
                                                  start_to_close_timeout=timedelta(seconds=5))
        return code


@workflow.defn(name="FloorWorkflow")
class FloorWorkflow:
    """A run of one task: the task as a child workflow, then the run's local activities."""

    @workflow.run
    async def run(self, shape: FloorShape) -> int:
        """Start the task's child workflow, wait for it, record like a run does."""
        code = await workflow.execute_child_workflow(
            FloorTaskWorkflow.run, shape, id=f"{workflow.info().workflow_id}.task",
            task_queue=FLOOR_QUEUES["orchestration"])
        for step in range(shape.local_calls - shape.local_calls // 2):
            await workflow.execute_local_activity(floor_local, f"run {step}",
                                                  start_to_close_timeout=timedelta(seconds=5))
        return code
