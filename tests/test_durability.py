"""Killing workers and the Temporal server mid-run loses no run and duplicates no event."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections import Counter
from pathlib import Path

import psutil
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e_support import (
    isolated_settings,
    kill_hard,
    queue_env,
    slow_plan,
    start_worker,
    started_jobs,
    stop_gently,
    stored_events,
    wait_for,
    worker_env,
)
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.stack.embedded import TemporalDevServer
from workflows.client import AssayClient, connect
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchResult

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie child counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def events_by_kind(db_url: str, run_id: str) -> Counter[tuple[str, str, str]]:
    events = await stored_events(db_url, run_id)
    orders = Counter((e.event.node_id, e.event.execution_order) for e in events)
    assert max(orders.values()) == 1, "an event was written twice"
    return Counter((e.event.node_id, e.event.event_type, e.event.event_subtype) for e in events)


def assert_single_execution_recorded(kinds: Counter[tuple[str, str, str]],
                                     result: ResearchResult) -> None:
    assert result.status == "completed", result.tasks[0].status_reason
    assert kinds[("slow", "code_exec", "start")] == 1
    assert kinds[("slow", "code_exec", "complete")] == 1
    assert kinds[("run", "checkpoint", "complete")] == 1


async def test_killed_worker_mid_job_resumes_after_restart(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue)
    queues = queues_from(settings)
    env = worker_env(dev_env.client.service_client.config.target_host, fresh_database_url, data,
                     **queue_env(settings))
    log = tmp_path / "worker.log"
    first = start_worker(env, log)
    try:
        req = load_plan(slow_plan(tmp_path, 4.0), max_bytes=1_500_000, queues=queues,
                        policy=RunPolicy(heartbeat_timeout_s=3))
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        run_id = await client.start_run(req, again=True)
        await wait_for(lambda: bool(started_jobs(data)), timeout=60, what="the job to start")
        kill_hard(first)
        second = start_worker(env, log)
        try:
            result = await asyncio.wait_for(client.result(run_id), timeout=120)
        finally:
            stop_gently(second)
    finally:
        kill_hard(first)
    # The retried activity ran the job again in the same attempt directory, wiped fresh.
    assert len(started_jobs(data)) == 1
    assert not psutil.pid_exists(first.pid), "the killed worker is gone"
    assert_single_execution_recorded(await events_by_kind(fresh_database_url, run_id), result)


async def test_killed_temporal_server_mid_run_resumes_after_restart(
        fresh_database_url: str, tmp_path: Path, task_queue: str) -> None:
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue).model_copy(update={
        "temporal_address": f"127.0.0.1:{free_port()}", "temporal_ui_port": free_port()})
    server = TemporalDevServer(settings)
    await server.start()
    queues = queues_from(settings)
    env = worker_env(settings.temporal_address, fresh_database_url, data,
                     **queue_env(settings))
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        client = AssayClient(await connect(settings.temporal_address),
                             task_queue=queues.orchestration)
        req = load_plan(slow_plan(tmp_path, 3.0), max_bytes=1_500_000, queues=queues)
        run_id = await client.start_run(req)
        await wait_for(lambda: bool(started_jobs(data)), timeout=60, what="the job to start")
        pid = server.owned_pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await wait_for(lambda: gone(pid), timeout=10, what="the server to die")
        server.stop(grace=1)  # reaps the dead child and forgets its pid file
        await server.start()
        assert server.pid != pid
        client = AssayClient(await connect(settings.temporal_address),
                             task_queue=queues.orchestration)
        result = await asyncio.wait_for(client.result(run_id), timeout=120)
    finally:
        stop_gently(worker)
        server.stop()
    assert_single_execution_recorded(await events_by_kind(fresh_database_url, run_id), result)
