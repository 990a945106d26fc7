"""The stack's worker process: a process that keeps dying is restarted with growing waits."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from pathlib import Path

import pytest

from tests.workers.stack.test_embedded import free_port
from workers.settings import Settings
from workers.stack.pools import BACKOFF_S, WorkerProcess, exit_text
from workers.stack.state import StackInfo, read_state
from workflows.contracts.pools import Pool


@pytest.mark.integration  # waits out the real backoff: 1 s, 2 s and 5 s
async def test_a_dying_worker_process_is_restarted_with_backoff_and_logged(
        tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "assay", temporal_address=f"127.0.0.1:{free_port()}")
    settings.root.mkdir(parents=True)
    info = StackInfo.for_this_process(settings)
    said: list[str] = []
    workers = WorkerProcess(settings, list(Pool), database_url="", info=info, say=said.append)
    workers.command = [sys.executable, "-c", "raise SystemExit(3)"]  # dies at once, always
    workers.start()
    first = workers.proc
    assert first is not None and read_state(settings) == info
    assert info.workers_pid == first.pid and not info.workers_serving

    restarted_at: list[float] = []
    while info.workers_restarts < 3:
        before = info.workers_restarts
        await workers.tend()
        if info.workers_restarts > before:
            restarted_at.append(time.monotonic())
        await asyncio.sleep(0.05)
    died = [line for line in said if "exited with code 3" in line]
    assert [line.rsplit(" ", 1)[-1] for line in died] == ["1s", "2s", "5s"]
    assert died[0] == (f"the worker process (pid {first.pid}) exited with code 3 after 0s; "
                       "restarting it in 1s")
    gaps = [later - earlier for earlier, later in itertools.pairwise(restarted_at)]
    assert gaps[0] >= BACKOFF_S[1] and gaps[1] >= BACKOFF_S[2]
    recorded = read_state(settings)
    assert recorded is not None and recorded.workers_restarts == 3
    assert recorded.workers_pid == info.workers_pid != first.pid
    await workers.stop(force=True)


async def test_a_stopping_worker_process_is_not_restarted(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "assay")
    settings.root.mkdir(parents=True)
    info = StackInfo.for_this_process(settings)
    workers = WorkerProcess(settings, list(Pool), database_url="", info=info,
                            say=lambda _: None)
    workers.command = [sys.executable, "-c", "import time; time.sleep(60)"]
    workers.start()
    proc = workers.proc
    assert proc is not None
    await workers.stop(force=False)
    assert proc.returncode == -15
    await workers.tend()
    assert workers.proc is proc and info.workers_restarts == 0


def test_exits_are_told_in_words() -> None:
    assert exit_text(3) == "exited with code 3"
    assert exit_text(-9) == "was killed by SIGKILL"


def test_the_stack_s_worker_process_makes_its_version_current_unless_told(
        tmp_path: Path) -> None:
    def env_of(settings: Settings) -> str:
        info = StackInfo.for_this_process(settings)
        return WorkerProcess(settings, list(Pool), database_url="", info=info,
                             say=print).env["ASSAY_DEPLOYMENT_SET_CURRENT"]

    assert env_of(Settings(data_dir=tmp_path)) == "always"
    assert env_of(Settings(data_dir=tmp_path, deployment_set_current="never")) == "never"
