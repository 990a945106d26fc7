"""A worker's health check asks the worker: its workers run and the server answered lately."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.metrics.definitions import REGISTRY
from client.assay import DATA_CONVERTER
from tests.support.e2e import isolated_settings
from tests.support.waiting import wait_for
from tests.workers.pools.test_pools import free_port
from workers.pools.builders import run_pools
from workers.pools.exporter import MetricsExporter
from workers.pools.health import HEALTH, STALE_AFTER_S, WorkerHealth, probe_server
from workflows.contracts.pools import Pool


def ask(port: int) -> tuple[int, dict[str, object]]:
    """``/healthz``'s status code and its JSON account."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_healthy_only_while_every_worker_runs_and_the_server_answered_lately() -> None:
    health = WorkerHealth()
    assert health.account(now=100.0)[0] is False  # no worker started yet
    health.serving("q-a")
    health.serving("q-b")
    assert health.account(now=100.0)[0] is False  # the server never answered
    health.server(True, now=100.0)
    assert health.account(now=100.0 + STALE_AFTER_S)[0] is True
    assert health.account(now=100.0 + STALE_AFTER_S + 1)[0] is False  # answered too long ago
    health.ended("q-b", RuntimeError("poller died"))
    healthy, account = health.account(now=101.0)
    assert healthy is False
    assert account["workers"] == {"q-a": "running", "q-b": "failed: poller died"}
    health.ended("q-gone", None)  # a queue never started is not invented
    assert "q-gone" not in health.account()[1]["workers"]  # type: ignore[operator]


def test_a_server_that_said_no_is_unhealthy_until_it_answers_again() -> None:
    health = WorkerHealth()
    health.serving("q")
    health.server(True, now=10.0)
    health.server(False, "connection refused")
    healthy, account = health.account(now=11.0)
    assert (healthy, account["server_error"]) == (False, "connection refused")
    health.server(True, now=12.0)
    assert health.account(now=12.0)[0] is True


async def test_the_probe_records_an_unreachable_server_by_its_error() -> None:
    gone = free_port()  # nothing listens there
    client = await Client.connect(f"127.0.0.1:{gone}", lazy=True)
    health = WorkerHealth()
    probe = asyncio.create_task(probe_server(client, health, interval_s=0.05))
    try:
        await wait_for(lambda: health.server_error is not None, timeout=20,
                       what="the probe to find the server gone")
    finally:
        probe.cancel()
    assert health.server_ok_at is None
    assert health.account()[0] is False


async def test_healthz_answers_200_while_pools_serve_and_503_after_they_stop(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    settings = isolated_settings(tmp_path, task_queue)
    exporter = MetricsExporter(0, None, REGISTRY, host="127.0.0.1")
    client = await Client.connect(dev_env.client.service_client.config.target_host,
                                  data_converter=DATA_CONVERTER)
    stop = asyncio.Event()
    serving = asyncio.create_task(run_pools(settings, [Pool.ORCHESTRATION, Pool.REFLECTION],
                                            database_url=fresh_database_url, stop=stop,
                                            client=client))
    answer: tuple[int, dict[str, object]] = (0, {})

    def healthy() -> bool:
        nonlocal answer
        answer = ask(exporter.port)
        return answer[0] == 200

    try:
        await wait_for(lambda: asyncio.to_thread(healthy), timeout=30,
                       what="the worker to report itself healthy")
        assert answer[1]["workers"] == {settings.queue(Pool.ORCHESTRATION): "running",
                                        settings.queue(Pool.REFLECTION): "running"}
        assert answer[1]["server_error"] is None
    finally:
        stop.set()
        await serving
    try:
        status, account = await asyncio.to_thread(ask, exporter.port)
    finally:
        exporter.close()
    assert status == 503
    queues = {settings.queue(Pool.ORCHESTRATION), settings.queue(Pool.REFLECTION)}
    assert not queues & set(account["workers"])  # type: ignore[arg-type]
    assert not queues & set(HEALTH.workers)


@pytest.mark.parametrize("path", ["/healthz/", "/health"])
def test_other_paths_are_not_the_health_check(path: str) -> None:
    exporter = MetricsExporter(0, None, REGISTRY, host="127.0.0.1")
    try:
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}{path}", timeout=5)
    finally:
        exporter.close()
