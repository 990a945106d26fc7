"""``assay run --wait`` survives a kill -9 and restart of the Temporal server it follows."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.e2e.test_durability import free_port, gone
from tests.support.e2e import (
    ROOT,
    isolated_settings,
    queue_env,
    slow_plan,
    start_worker,
    started_jobs,
    stop_gently,
    worker_env,
)
from tests.support.waiting import wait_for
from workers.stack.temporal import TemporalDevServer

pytestmark = pytest.mark.integration


async def test_wait_reconnects_after_the_server_restarts_and_exits_by_the_outcome(
        fresh_database_url: str, tmp_path: Path, task_queue: str) -> None:
    """It used to exit 1 ("transport error") while the run went on to complete."""
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue).model_copy(update={
        "temporal_address": f"127.0.0.1:{free_port()}", "temporal_ui_port": free_port()})
    server = TemporalDevServer(settings)  # a SQLite file under data: state survives the kill
    await server.start()
    env = worker_env(settings.temporal_address, fresh_database_url, data,
                     **queue_env(settings))
    worker = start_worker(env, tmp_path / "worker.log")
    waiter = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", "run", str(slow_plan(tmp_path, 4.0)), "--wait",
        env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        await wait_for(lambda: bool(started_jobs(data)), timeout=90, what="the job to start")
        pid = server.owned_pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await wait_for(lambda: gone(pid), timeout=10, what="the server to die")
        server.stop(grace=1)  # reaps the dead child and forgets its pid file
        # The server stays down until --wait has noticed, so a quick restart cannot hide it.
        seen = await asyncio.wait_for(said(waiter, "lost Temporal"), timeout=60)
        await server.start()
        out, rest = await asyncio.wait_for(waiter.communicate(), timeout=240)
        err = seen + rest
    finally:
        with contextlib.suppress(ProcessLookupError):
            waiter.kill()
        stop_gently(worker)
        server.stop()
    text = err.decode()
    assert waiter.returncode == 0, text
    assert "lost Temporal" in text and "reconnecting every 2 s, 90 times at most" in text
    assert "reconnected to Temporal; following run" in text
    # (the client's own retry warnings may come first on stdout while the server is down)
    assert any(line.startswith("run ") and line.endswith(": completed")
               for line in out.decode().splitlines()), out.decode()


async def said(proc: asyncio.subprocess.Process, text: str) -> bytes:
    """What ``proc`` wrote on stderr up to and with the first line holding ``text``."""
    assert proc.stderr is not None
    seen = b""
    while line := await proc.stderr.readline():
        seen += line
        if text.encode() in line:
            return seen
    raise AssertionError(f"stderr ended before {text!r}: {seen.decode()}")
