"""The structural floor: a bare workflow with the dispatch shape of a one-task Assay run.

Assay's design fixes the shape of a task's path on Temporal: the run starts the task as a
child workflow on the orchestration pool; memory is consulted on the reflection pool; three
reviewers run in parallel on the agents and sandbox pools; the job runs as a subprocess on the
sandbox pool and its evidence is verified there in a second activity; events and reports are
written by local activities. :class:`FloorWorkflow` makes exactly those dispatches with none
of Assay's code: each activity returns at once, the job activity starts ``python -c pass``,
and the local activities do nothing. What it costs on a server is what that shape costs
there; Assay's time above it is Assay's own.

With ``learn`` the floor also makes learning's dispatches, which a run with memory or skills on
makes after its task: the hand-off (a local activity) signals a long-lived library workflow,
starting it if needed, and the library makes one dispatch to the reflection pool for each batch
of outcomes it wakes to (Assay's ``remember_tasks``); the signals carry a key, not an outcome.

With ``attributes`` its run and task also keep their phase, status and attempts in search
attributes, as the design asks of every run and task (``temporal workflow list --query``
filters them): eight upserts, where and as a one-task run sends them (``workflows/task/state.py``
and ``workflows/research/state.py`` set them; Assay sends each activation's at once). Each is a
command, a history event and a visibility write on the server.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate, WorkflowIDConflictPolicy

FLOOR_QUEUES = {name: f"bench-floor-{name}" for name in
                ("orchestration", "agents", "sandbox", "reflection", "skills")}
"""One task queue per pool the task's path crosses."""
LOCAL_CALLS = 9
"""Local activities of a one-task run (6 event flushes, the task's and the run's reports, the
hand-off to the learner), as the breakdown counts them."""
UPSERTS = 8
"""The search attribute upserts of a one-task run (its run 3, its task 5), as the breakdown
counts them; the floor with ``attributes`` sends as many."""
LIBRARY_ID = "bench-floor-library"
"""The floor's library workflow (one, as a skills queue has one library)."""


@dataclass
class FloorShape:
    """How many local activities the floor records, and whether the job starts a process."""

    local_calls: int = LOCAL_CALLS
    spawn: bool = True
    learn: bool = False
    """Whether the hand-off signals the floor's library (learning's dispatches)."""
    attributes: bool = False
    """Whether the run and task keep their phase, status and attempts in search attributes."""


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


@activity.defn(name="floor_hand_off")
async def floor_hand_off(key: str) -> str:
    """Signal ``key`` to the floor's library, starting it if needed, as Assay's hand-off does."""
    await activity.client().start_workflow(
        FloorLibraryWorkflow.run, id=LIBRARY_ID, task_queue=FLOOR_QUEUES["skills"],
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        start_signal="finished", start_signal_args=[key])
    return key


def _mark(shape: FloorShape, phase: str, status: str = "", attempts: str = "") -> None:
    """Upsert the phase (with the status or attempts given) when the shape keeps them."""
    if not shape.attributes:
        return
    updates: list[SearchAttributeUpdate[Any]] = [
        SearchAttributeKey.for_keyword("AssayPhase").value_set(phase)]
    if status:
        updates.append(SearchAttributeKey.for_keyword("AssayStatus").value_set(status))
    if attempts:
        updates.append(SearchAttributeKey.for_keyword_list("AssayAttempts").value_set(
            [attempts]))
    workflow.upsert_search_attributes(updates)  # pyright: ignore[reportUnknownMemberType]


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
        _mark(shape, "review", attempts="review:1")
        await asyncio.gather(_remote("review ops", "agents"), _remote("review quality", "agents"),
                             _remote("review infrastructure", "sandbox"))
        _mark(shape, "execute", attempts="execute:1")
        code = await workflow.execute_activity(floor_job, shape.spawn,
                                               task_queue=FLOOR_QUEUES["sandbox"],
                                               start_to_close_timeout=timedelta(seconds=30))
        _mark(shape, "verify", attempts="verify:1")
        await _remote("verify evidence", "sandbox")
        _mark(shape, "finalize", status="completed")
        local_calls = shape.local_calls // 2
        if shape.learn and local_calls:
            await workflow.execute_local_activity(floor_hand_off, workflow.info().workflow_id,
                                                  start_to_close_timeout=timedelta(seconds=5))
            local_calls -= 1
        for step in range(local_calls):
            if step == local_calls - 1:
                _mark(shape, "done")  # before the task's last event write, as a task does
            await workflow.execute_local_activity(floor_local, f"task {step}",
                                                  start_to_close_timeout=timedelta(seconds=5))
        if not local_calls:
            _mark(shape, "done")
        return code


@workflow.defn(name="FloorWorkflow")
class FloorWorkflow:
    """A run of one task: the task as a child workflow, then the run's local activities."""

    @workflow.run
    async def run(self, shape: FloorShape) -> int:
        """Start the task's child workflow, wait for it, record like a run does."""
        _mark(shape, "execute")
        code = await workflow.execute_child_workflow(
            FloorTaskWorkflow.run, shape, id=f"{workflow.info().workflow_id}.task",
            task_queue=FLOOR_QUEUES["orchestration"])
        _mark(shape, "report")
        for step in range(shape.local_calls - shape.local_calls // 2):
            await workflow.execute_local_activity(floor_local, f"run {step}",
                                                  start_to_close_timeout=timedelta(seconds=5))
        _mark(shape, "done", status="completed")
        return code


@workflow.defn(name="FloorLibraryWorkflow")
class FloorLibraryWorkflow:
    """The library's shape: wake to the outcomes signalled, one dispatch for each batch."""

    def __init__(self) -> None:
        self._inbox: list[str] = []

    @workflow.signal(name="finished")
    def finished(self, key: str) -> None:
        """An outcome's key."""
        self._inbox.append(key)

    @workflow.run
    async def run(self) -> None:
        """Take each batch of arrivals to the reflection pool; continue as new when told."""
        while True:
            await workflow.wait_condition(
                lambda: bool(self._inbox) or workflow.info().is_continue_as_new_suggested())
            if self._inbox:
                batch, self._inbox = self._inbox, []
                await _remote(f"remember {len(batch)}", "reflection")
            else:
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new()
