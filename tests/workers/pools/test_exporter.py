"""A worker's one metrics port: Assay's registry and the Temporal SDK's metrics, one exposition."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.metrics.definitions import REGISTRY
from client.assay import DATA_CONVERTER
from tests.support.e2e import isolated_settings
from tests.support.waiting import wait_for
from tests.workers.pools.test_pools import free_port
from workers.pools.builders import make_runtime, run_pools
from workers.pools.exporter import MetricsExporter
from workers.settings import Settings
from workflows.contracts.pools import Pool


def scrape(port: int, path: str = "/metrics") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return resp.read().decode()


def families(text: str) -> Counter[str]:
    """How many times each metric family appears in an exposition (parsed as Prometheus)."""
    return Counter(f.name for f in text_string_to_metric_families(text))


async def test_one_port_serves_assays_metrics_and_the_sdks_as_one_valid_exposition(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    port = free_port()
    settings = isolated_settings(tmp_path, task_queue).model_copy(update={"metrics_port": port})
    client = await Client.connect(dev_env.client.service_client.config.target_host,
                                  data_converter=DATA_CONVERTER, runtime=make_runtime(settings))
    stop = asyncio.Event()
    serving = asyncio.create_task(run_pools(settings, [Pool.ORCHESTRATION],
                                            database_url=fresh_database_url, stop=stop,
                                            client=client))
    body = ""

    def polled() -> bool:
        nonlocal body
        body = scrape(port)
        return "temporal_num_pollers" in body

    try:
        await wait_for(lambda: asyncio.to_thread(polled), timeout=30, what="the SDK's pollers")
    finally:
        stop.set()
        await serving
    seen = families(body)
    assert [name for name, count in seen.items() if count > 1] == []
    assert {f.name for f in REGISTRY.collect()} <= set(seen)
    assert "temporal_num_pollers" in seen and "assay_tasks" in seen
    assert "# HELP assay_tasks_total Tasks that ended, by final status" in body


def test_an_unreadable_sdk_endpoint_is_named_and_assays_part_still_answers() -> None:
    gone = free_port()  # nothing listens there
    exporter = MetricsExporter(0, f"http://127.0.0.1:{gone}/metrics", REGISTRY,
                               host="127.0.0.1")
    try:
        body = scrape(exporter.port)
        with pytest.raises(urllib.error.HTTPError, match="404"):
            scrape(exporter.port, "/other")
    finally:
        exporter.close()
    assert "# the Temporal SDK's metrics could not be read: " in body
    assert "Connection refused" in body
    assert "assay_runs" in families(body)


def test_a_taken_metrics_port_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        with pytest.raises(OSError, match="Address already in use"):
            MetricsExporter(taken.getsockname()[1], None, REGISTRY)


def listening_address(port: int) -> str:
    """The address a socket of this process listens on at ``port``."""
    [conn] = [c for c in psutil.Process().net_connections(kind="tcp")
              if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
    return str(conn.laddr.ip)


def test_the_metrics_port_listens_on_loopback_unless_a_host_is_set(tmp_path: Path) -> None:
    loopback, everywhere = free_port(), free_port()
    make_runtime(Settings(data_dir=tmp_path, metrics_port=loopback))
    assert listening_address(loopback) == "127.0.0.1"
    make_runtime(Settings(data_dir=tmp_path, metrics_port=everywhere, metrics_host="0.0.0.0"))
    assert listening_address(everywhere) == "0.0.0.0"
