"""``assay check`` judges a pool by how recently a worker polled its queue.

The embedded dev server answers an idle poll after ``LONG_POLL_S``, and every answer starts
a new poll, so a live idle worker is always seen within that; the window of ``assay check``
is twice as long. Measured here on the dev server as the stack launches it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator

import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from client.assay import DATA_CONVERTER
from tests.workers.stack.test_embedded import private_root, temporal_settings
from workers.settings import Settings
from workers.stack.check import EMBEDDED_WINDOW_S, poll_window, pollers, pollers_item
from workers.stack.temporal import LONG_POLL_S, TemporalDevServer
from workflows.contracts.pools import Pool

pytestmark = pytest.mark.integration


@activity.defn
async def idle() -> None:
    """Never called: the worker only polls."""


@pytest.fixture
def settings() -> Iterator[Settings]:
    with private_root() as root:
        yield temporal_settings(root / "assay")


async def last_access_age(client: Client, queue: str) -> float:
    seen = await pollers(client, queue, "activity")
    assert len(seen) == 1, seen
    return time.time() - seen[0].last_access_time.ToMicroseconds() / 1e6


async def test_an_idle_worker_stays_served_and_a_gone_one_is_down_within_the_window(
        settings: Settings) -> None:
    server = TemporalDevServer(settings)
    await server.start()
    try:
        assert poll_window(settings) == EMBEDDED_WINDOW_S == 2 * LONG_POLL_S == 20
        client = await Client.connect(settings.temporal_address, data_converter=DATA_CONVERTER,
                                      namespace=settings.temporal_namespace)
        queue = settings.queue(Pool.SANDBOX)
        worker = Worker(client, task_queue=queue, activities=[idle])
        running = asyncio.create_task(worker.run())
        ages: list[float] = []
        details: set[str] = set()
        began = time.monotonic()
        while time.monotonic() - began < LONG_POLL_S + 3:  # one whole idle long poll and more
            await asyncio.sleep(0.5)
            if await pollers(client, queue, "activity"):
                ages.append(await last_access_age(client, queue))
                item = await pollers_item(client, queue, Pool.SANDBOX, EMBEDDED_WINDOW_S)
                assert item.ok, item
                details.add(item.detail)
        assert max(ages) < LONG_POLL_S + 1.5, "an idle poll is answered within LONG_POLL_S"
        assert any(later < earlier for earlier, later in itertools.pairwise(ages)), (
            "a new poll refreshed the last access")
        assert details == {"1 activity poller seen in the last 20 s"}

        await worker.shutdown()
        await running
        gone = time.monotonic()
        while (item := await pollers_item(client, queue, Pool.SANDBOX,
                                          EMBEDDED_WINDOW_S)).ok:
            assert time.monotonic() - gone < EMBEDDED_WINDOW_S + 2, "down within the window"
            await asyncio.sleep(0.5)
        assert item.detail.startswith("0 activity pollers seen in the last 20 s: no live "
                                      "worker serves it; run `assay up`")
    finally:
        server.stop(grace=2.0)


def test_a_temporal_the_stack_did_not_launch_gets_the_default_window(
        settings: Settings) -> None:
    assert poll_window(settings) == 70.0, "Temporal's own 60 s long poll, and a margin"
