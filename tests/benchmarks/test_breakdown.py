"""The breakdown's local activity rows: counted from the markers, timed by the workers."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from benchmarks.breakdown import ActivityClock, Breakdown, add_run

QUEUE = "test-breakdown"
PAUSE_S = 0.05


@activity.defn
async def pause() -> None:
    """A local activity that takes a known time."""
    await asyncio.sleep(PAUSE_S)


@activity.defn
async def remote() -> None:
    """A remote activity, which the clock leaves to the history."""


@workflow.defn(sandboxed=False)
class Timed:
    @workflow.run
    async def run(self) -> None:
        for _ in range(2):
            await workflow.execute_local_activity(pause, start_to_close_timeout=timedelta(
                seconds=10))
        await workflow.execute_activity(remote, start_to_close_timeout=timedelta(seconds=10))


async def test_a_local_activity_row_holds_the_time_its_worker_timed(
        dev_env: WorkflowEnvironment) -> None:
    clock = ActivityClock()
    config = dev_env.client.config()
    config["interceptors"] = [clock]
    timed = Client(**config)
    async with Worker(timed, task_queue=QUEUE, workflows=[Timed], activities=[pause, remote]):
        run_id = f"breakdown-{uuid.uuid4()}"
        await timed.execute_workflow(Timed.run, id=run_id, task_queue=QUEUE)
    assert [name for name, _ in clock.local[run_id]] == ["pause", "pause"]  # no remote one
    with_clock, without = Breakdown(), Breakdown()
    await add_run(dev_env.client, run_id, with_clock, clock)
    await add_run(dev_env.client, run_id, without)
    row = with_clock.rows["local activity pause"]
    assert row.count == 2
    assert 2 * PAUSE_S * 1000 <= row.run_ms < 10_000
    assert without.rows["local activity pause"].run_ms == 0.0  # a history does not hold it
    assert with_clock.rows["activity remote"].count == 1
    history = await dev_env.client.get_workflow_handle(run_id).fetch_history()
    assert with_clock.history_bytes == sum(e.ByteSize() for e in history.events) > 0
