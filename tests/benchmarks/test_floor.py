"""The floor makes the dispatches it claims: with ``learn``, a library's signal and dispatch;
with ``attributes``, as many search attribute upserts as a one-task run."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from benchmarks.bench_runs import floor_workers
from benchmarks.floor import FLOOR_QUEUES, LIBRARY_ID, UPSERTS, FloorShape, FloorWorkflow
from client.assay import AssayClient
from tests.support.waiting import not_found, wait_for
from tests.workflows.harness import Harness, task
from workflows.constants import PHASE_KEY, STATUS_KEY, task_workflow_id

SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
UPSERT = EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES


async def _library(client: Client) -> list[HistoryEvent]:
    """The floor's library's events so far (none when it never started)."""
    try:
        return list((await client.get_workflow_handle(LIBRARY_ID).fetch_history()).events)
    except Exception as err:
        if not_found(err):
            return []
        raise


async def _floor(client: Client, shape: FloorShape) -> str:
    run_id = f"floor-{uuid.uuid4()}"
    await client.execute_workflow(FloorWorkflow.run, shape, id=run_id,
                                  task_queue=FLOOR_QUEUES["orchestration"])
    return f"{run_id}.task"


async def test_the_learning_floor_signals_its_library_which_dispatches_for_it(
        dev_env: WorkflowEnvironment) -> None:
    client = dev_env.client
    async with contextlib.AsyncExitStack() as workers:
        for worker in floor_workers(client):
            await workers.enter_async_context(worker)
        before = len(await _library(client))
        plain = await _floor(client, FloorShape(spawn=False))
        assert len(await _library(client)) == before  # the plain floor hands nothing off
        learning = await _floor(client, FloorShape(spawn=False, learn=True))
        new = (await _library(client))[before:]
        signals = [e for e in new if e.event_type == SIGNALED]
        # the hand-off returned once its signal was taken: the task's id, as its outcome's key
        assert [s.workflow_execution_signaled_event_attributes.input.payloads[0].data
                for s in signals] == [f'"{learning}"'.encode()]

        async def remembered() -> bool:
            events = (await _library(client))[before:]
            return any(e.event_type == COMPLETED for e in events)
        await wait_for(remembered, timeout=30, what="the library's dispatch for the outcome")
    for task_id in (plain, learning):  # both keep the task's local activities: 4 markers
        history = await client.get_workflow_handle(task_id).fetch_history()
        markers = [e for e in history.events
                   if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED]
        assert len(markers) == FloorShape().local_calls // 2


def _upserts(events: list[HistoryEvent]) -> int:
    return sum(e.event_type == UPSERT for e in events)


async def test_the_floor_with_attributes_upserts_as_often_as_a_one_task_run(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    client = dev_env.client
    harness = Harness(dev_env, task_queue, tmp_path)
    req = harness.request([task("a")])
    async with harness.worker():  # started as the CLI starts a run: with kind, plan, status
        run_id = await AssayClient(client, task_queue=task_queue).start_run(req)
        await client.get_workflow_handle(run_id).result()
    assay = [_upserts(list((await client.get_workflow_handle(wid).fetch_history()).events))
             for wid in (run_id, task_workflow_id(run_id, "a"))]
    assert sum(assay) == UPSERTS, assay
    async with contextlib.AsyncExitStack() as workers:
        for worker in floor_workers(client):
            await workers.enter_async_context(worker)
        plain = await _floor(client, FloorShape(spawn=False))
        marked = await _floor(client, FloorShape(spawn=False, attributes=True))
    for task_id, expected in ((plain, 0), (marked, UPSERTS)):
        run, kept = task_id.removesuffix(".task"), 0
        for wid in (run, task_id):
            handle = client.get_workflow_handle(wid)
            kept += _upserts(list((await handle.fetch_history()).events))
            if expected:  # each ends as a run and a task end: done, completed
                found = (await handle.describe()).typed_search_attributes
                assert (found.get(PHASE_KEY), found.get(STATUS_KEY)) == ("done", "completed")
        assert kept == expected, task_id
