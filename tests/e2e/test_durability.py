"""Killing workers and the Temporal server mid-run loses no run and duplicates no event; a
worker killed while it verifies evidence holds the task no longer than the heartbeat timeout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest
from temporalio.api.enums.v1 import TimeoutType
from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient, connect
from tests.support.e2e import (
    isolated_settings,
    kill_hard,
    queue_env,
    slow_plan,
    start_worker,
    started_jobs,
    stop_gently,
    stored_events,
    worker_env,
)
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.stack.temporal import TemporalDevServer
from workflows.constants import task_workflow_id
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchResult

pytestmark = pytest.mark.integration
VERIFY_RESUMES_IN = 45.0
"""Seconds from the kill to the run's end: the 3 s heartbeat timeout, a new worker's start
and a second read of the artifact, on a loaded machine."""


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


def big_artifact_plan(folder: Path, mib: int) -> Path:
    """A one-task plan whose job writes a ``mib`` MiB artifact: seconds to verify."""
    code = ("import json\n"
            "with open('big.bin', 'wb') as out:\n"
            f"    for _ in range({mib}):\n"
            "        out.write(b'x' * (1 << 20))\n"
            "json.dump({'mib': %d}, open('metrics.json', 'w'))\n" % mib)
    plan: dict[str, Any] = {"meeting_id": f"big-{folder.name}", "decisions": [{
        "task_id": "big", "priority": "HIGH", "action": "write a large artifact",
        "acceptance_criteria": ["big.bin written"],
        "job": {"code": code, "expected_artifacts": ["big.bin"], "expected_metrics": ["mib"],
                "resources": {"timeout_s": 120}},
    }]}
    path = folder / "pending_actions.json"
    path.write_text(json.dumps(plan))
    return path


async def verifying(client: AssayClient, run_id: str) -> bool:
    """True while the task ``big`` of ``run_id`` has a worker re-reading its evidence."""
    with contextlib.suppress(RPCError, WorkflowQueryFailedError):
        live = await client.task_live(run_id, "big")
        return live.activity == "verify_evidence" and live.started is not None
    return False


async def test_killed_worker_mid_verification_moves_on_within_the_heartbeat(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    """The worker is SIGKILLed while it re-reads a 512 MiB artifact; a new one verifies it
    again once the heartbeat timeout (3 s) passes, where the task once stalled 5 minutes."""
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue)
    queues = queues_from(settings)
    env = worker_env(dev_env.client.service_client.config.target_host, fresh_database_url, data,
                     **queue_env(settings))
    log = tmp_path / "worker.log"
    first = start_worker(env, log)
    try:
        req = load_plan(big_artifact_plan(tmp_path, 512), max_bytes=1_500_000, queues=queues,
                        policy=RunPolicy(heartbeat_timeout_s=3))
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        run_id = await client.start_run(req, again=True)
        await wait_for(lambda: verifying(client, run_id), timeout=90, every=0.05,
                       what="the evidence check to start")
        kill_hard(first)
        second = start_worker(env, log)
        try:  # not the 5 minutes a verification may take on a live worker
            result = await asyncio.wait_for(client.result(run_id), timeout=VERIFY_RESUMES_IN)
        finally:
            stop_gently(second)
    finally:
        kill_hard(first)
    assert result.status == "completed", result.tasks[0].status_reason
    history = await dev_env.client.get_workflow_handle(
        task_workflow_id(run_id, "big")).fetch_history()
    scheduled = {e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
                 for e in history.events
                 if e.HasField("activity_task_scheduled_event_attributes")}
    verified = next(e.activity_task_started_event_attributes for e in history.events
                    if e.HasField("activity_task_started_event_attributes") and scheduled[
                        e.activity_task_started_event_attributes.scheduled_event_id]
                    == "verify_evidence")
    assert verified.attempt == 2, "the killed attempt was retried once"
    assert (verified.last_failure.timeout_failure_info.timeout_type
            == TimeoutType.TIMEOUT_TYPE_HEARTBEAT), verified.last_failure
