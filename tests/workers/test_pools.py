"""Worker pools: what each serves, and the Prometheus endpoint every worker exposes."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.e2e_support import isolated_settings, wait_for
from workers.pools import SERVED_POOLS, make_runtime, run_pools
from workflows.client import DATA_CONVERTER
from workflows.constants import Pool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_served_pools_are_every_pool_but_skills() -> None:
    assert set(Pool) - SERVED_POOLS == {Pool.SKILLS}


async def test_workers_expose_prometheus_metrics(dev_env: WorkflowEnvironment,
                                                 postgres_server_url: str, tmp_path: Path,
                                                 task_queue: str) -> None:
    port = free_port()
    settings = isolated_settings(tmp_path, task_queue).model_copy(update={"metrics_port": port})
    runtime = make_runtime(settings)
    assert runtime is not None
    client = await Client.connect(dev_env.client.service_client.config.target_host,
                                  data_converter=DATA_CONVERTER, runtime=runtime)
    stop = asyncio.Event()
    serving = asyncio.create_task(run_pools(settings, [Pool.ORCHESTRATION],
                                            database_url=postgres_server_url, stop=stop,
                                            client=client))
    body = ""

    def scrape() -> bool:
        nonlocal body
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                body = resp.read().decode()
        except OSError:
            return False
        return "temporal_num_pollers" in body

    try:
        await wait_for(lambda: asyncio.to_thread(scrape), timeout=30, what="metrics")
    finally:
        stop.set()
        await serving
    pollers = [line for line in body.splitlines() if line.startswith("temporal_num_pollers")]
    assert any(settings.queue(Pool.ORCHESTRATION) in line for line in pollers), pollers
