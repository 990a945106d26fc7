"""The whole stack: ``up`` in the background, ``check``, ``down``, crash clean-up."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.waiting import wait_for_blocking
from tests.workers.stack.test_embedded import free_port, private_root
from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workers.stack.check import HealthItem
from workers.stack.embedded import EmbeddedPostgres
from workers.stack.launcher import check, down, up
from workers.stack.process import is_alive, start_time
from workers.stack.state import read_state, running_stack, state_path
from workers.stack.temporal import TemporalDevServer
from workflows.contracts.pools import Pool

# The foreground stack with no worker pools: the services under test, nothing else.
SERVICES_ONLY = [sys.executable, "-c",
                 "import asyncio; from workers.settings import Settings; "
                 "from workers.stack.launcher import say_stderr, serve; "
                 "asyncio.run(serve(Settings(), pools=[], say=say_stderr))"]


def stack_settings(root: Path) -> Settings:
    return Settings(data_dir=root / "assay", temporal_address=f"127.0.0.1:{free_port()}",
                    temporal_ui_port=free_port(), temporal_namespace="assay-stack")


def by_name(items: list[HealthItem]) -> dict[str, HealthItem]:
    return {item.name: item for item in items}


@pytest.fixture
def settings() -> Iterator[Settings]:
    """Settings for a stack of its own; whatever a test leaves running is stopped after it."""
    with private_root() as root:
        settings = stack_settings(root)
        yield settings
        down(settings, say=lambda _: None, timeout=10)


def test_check_reports_every_part_down_when_nothing_runs(settings: Settings) -> None:
    items = by_name(check(settings))
    assert not items["temporal"].ok
    assert settings.temporal_address in items["temporal"].detail
    assert not items["search attributes"].ok
    for pool in Pool:
        queue = items[f"queue {settings.queue(pool)}"]
        assert not queue.ok and "not reachable" in queue.detail
    assert not items["postgresql"].ok and "not running" in items["postgresql"].detail
    assert items["qdrant"].ok, "an unused local storage directory opens"
    assert "sandbox" in items


def test_down_with_nothing_running_says_so_and_succeeds(settings: Settings) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    settings.root.mkdir(parents=True)
    stale = {"pid": int(gone.stdout), "pid_started": 0.0, "started_at": "2026-01-01T00:00:00",
             "data_dir": str(settings.root)}
    state_path(settings).write_text(json.dumps(stale))
    said: list[str] = []
    assert down(settings, say=said.append) == 0
    assert said == [f"Assay is not running on {settings.root}"]
    assert not state_path(settings).exists(), "a stale stack.json is cleared"


@pytest.mark.integration
def test_up_in_background_then_check_then_down(settings: Settings) -> None:
    said: list[str] = []
    assert up(settings, detach=True, say=said.append, command=SERVICES_ONLY, timeout=60) == 0
    info = running_stack(settings)
    assert info is not None and info.status == "running"
    assert f"pid {info.pid}" in said[0] and info.ui_url in said[0]
    assert info.temporal_pid is not None and info.postgres_pid is not None

    assert up(settings, detach=True, say=said.append, command=SERVICES_ONLY) == 0
    assert f"already running on {settings.root} (pid {info.pid}" in said[-1]
    assert "reusing it" in said[-1]
    assert running_stack(settings) == info, "the running stack is reused, not replaced"

    items = by_name(check(settings))
    for name in ("temporal", "search attributes", "postgresql", "qdrant"):
        assert items[name].ok, items[name]
    orchestration = items[f"queue {settings.queue(Pool.ORCHESTRATION)}"]
    assert not orchestration.ok and "0 workflow pollers" in orchestration.detail

    assert down(settings, say=said.append) == 0
    assert said[-1] == "stopped"
    assert not is_alive(info.pid) and not state_path(settings).exists()
    assert not is_alive(info.temporal_pid) and not is_alive(info.postgres_pid)
    assert EmbeddedPostgres(settings.postgres_dir).pid is None


@pytest.mark.integration
def test_stack_restarts_a_killed_temporal_and_down_cleans_up_after_a_crash(
        settings: Settings) -> None:
    assert up(settings, detach=True, say=lambda _: None, command=SERVICES_ONLY,
              timeout=60) == 0
    info = running_stack(settings)
    assert info is not None and info.temporal_pid is not None
    temporal = TemporalDevServer(settings)

    os.kill(info.temporal_pid, signal.SIGKILL)
    wait_for_blocking(lambda: temporal.owned_pid() not in (None, info.temporal_pid),
                      timeout=30, what="the stack to restart the Temporal dev server")
    restarted = temporal.owned_pid()
    assert restarted is not None
    wait_for_blocking(lambda: (read_state(settings) or info).temporal_pid == restarted,
                      timeout=10, what="stack.json to name the restarted server")

    os.kill(info.pid, signal.SIGKILL)  # the stack dies; its services are left behind
    wait_for_blocking(lambda: running_stack(settings) is None, timeout=10, what="the stack to die")
    assert is_alive(restarted) and EmbeddedPostgres(settings.postgres_dir).pid is not None
    said: list[str] = []
    assert down(settings, say=said.append) == 0
    assert said == [f"Assay is not running on {settings.root}",
                    "stopped the Temporal dev server left running by an earlier stack",
                    "stopped PostgreSQL left running by an earlier stack"]
    assert not is_alive(restarted) and EmbeddedPostgres(settings.postgres_dir).pid is None


def dead_pid() -> tuple[int, float]:
    """The pid and start time of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    started = start_time(proc.pid) or 0.0
    proc.wait()
    return proc.pid, started


def test_check_says_which_recorded_services_are_gone_and_forgets_them(
        settings: Settings) -> None:
    (stack, began), (temporal, t_began), (postgres, p_began) = (dead_pid() for _ in range(3))
    settings.root.mkdir(parents=True)
    state_path(settings).write_text(json.dumps({
        "pid": stack, "pid_started": began, "started_at": "2026-01-01T00:00:00",
        "data_dir": str(settings.root), "temporal_pid": temporal, "temporal_started": t_began,
        "postgres_pid": postgres, "postgres_started": p_began}))
    item = by_name(check(settings))["stack"]
    assert not item.ok
    assert (f"the Temporal dev server (pid {temporal}), PostgreSQL (pid {postgres}) recorded "
            "in stack.json no longer run") in item.detail
    info = read_state(settings)
    assert info is not None and (info.temporal_pid, info.postgres_pid) == (None, None)
    assert info.pid == stack, "the dead stack itself stays recorded for `assay down`"


@pytest.mark.integration
def test_up_says_when_the_last_stacks_services_died_with_it(settings: Settings) -> None:
    assert up(settings, detach=True, say=lambda _: None, command=SERVICES_ONLY,
              timeout=60) == 0
    info = running_stack(settings)
    assert info is not None and info.temporal_pid is not None
    os.kill(info.pid, signal.SIGKILL)
    os.kill(info.temporal_pid, signal.SIGKILL)
    wait_for_blocking(
        lambda: running_stack(settings) is None and not is_alive(info.temporal_pid or 0),
        timeout=10, what="the stack and its Temporal dev server to die")
    said: list[str] = []
    assert up(settings, detach=True, say=said.append, command=SERVICES_ONLY, timeout=60) == 0
    assert said[0] == (f"stack.json recorded the Temporal dev server (pid {info.temporal_pid}), "
                       "no longer running: the last stack ended without `assay down`")
    now = running_stack(settings)
    assert now is not None and now.temporal_pid is not None and is_alive(now.temporal_pid)


def served_queues(items: dict[str, HealthItem], settings: Settings) -> list[HealthItem]:
    return [items[f"queue {settings.queue(pool)}"] for pool in sorted(SERVED_POOLS)]


@pytest.mark.integration
def test_a_killed_worker_process_is_restarted_and_check_tells_at_once(
        settings: Settings) -> None:
    said: list[str] = []
    assert up(settings, detach=True, say=said.append, timeout=120) == 0  # every pool
    assert "every pool served" in said[0]
    info = running_stack(settings)
    assert info is not None and info.workers_pid is not None and info.workers_serving
    items = by_name(check(settings))
    assert items["stack"].ok and all(queue.ok for queue in served_queues(items, settings))

    old = info.workers_pid
    os.kill(old, signal.SIGKILL)
    wait_for_blocking(lambda: not is_alive(old), timeout=5, what="the worker process to die")
    items = by_name(check(settings))  # at once: no waiting for its last polls to age
    assert items["stack"].ok
    for queue in served_queues(items, settings):
        assert not queue.ok
        assert (f"the worker process (pid {old}) exited; the stack is restarting it"
                in queue.detail or "restarted and does not poll yet" in queue.detail), queue

    def restarted() -> bool:
        now = read_state(settings)
        return now is not None and now.workers_pid != old and now.workers_serving

    wait_for_blocking(restarted, timeout=60, what="the watchdog to restart the worker process")
    items = by_name(check(settings))
    assert all(queue.ok for queue in served_queues(items, settings))
    assert items["stack"].detail.endswith(", restarted 1 time")
    log = (settings.logs_dir / "stack.log").read_text()
    assert f"the worker process (pid {old}) was killed by SIGKILL after" in log
    assert "restarting it in 1s" in log and "serves every pool again" in log

    restarted_info = read_state(settings)
    assert restarted_info is not None and restarted_info.workers_pid is not None
    os.kill(info.pid, signal.SIGKILL)  # now the stack itself dies
    wait_for_blocking(lambda: running_stack(settings) is None, timeout=10, what="the stack to die")
    items = by_name(check(settings))
    assert not items["stack"].ok and "ended without `assay down`" in items["stack"].detail
    for queue in served_queues(items, settings):
        assert (queue.ok, queue.detail) == (
            False, f"the stack (pid {info.pid}) that ran its workers is gone")
    wait_for_blocking(lambda: not is_alive(restarted_info.workers_pid or 0), timeout=45,
                      what="the orphaned worker process to stop by itself")


@pytest.mark.integration
def test_up_detach_fails_with_the_reason_when_the_workers_cannot_start(
        settings: Settings) -> None:
    said: list[str] = []
    with socket.socket() as taken:  # the workers' metrics port is in use
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        blocked = settings.model_copy(update={"metrics_port": taken.getsockname()[1]})
        assert up(blocked, detach=True, say=said.append, timeout=120) == 1
    error = said[-1]
    assert error.startswith("error: `assay up` exited with code 1 while starting; last lines "
                            f"of {settings.logs_dir / 'stack.log'}:")
    assert "Address already in use" in error
    assert "exited with code 1 while starting; its output is above" in error
    assert running_stack(settings) is None
