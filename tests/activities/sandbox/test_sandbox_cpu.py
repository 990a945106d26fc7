"""The CPU time a job used: its whole process tree, and only its own.

Each job burns CPU until the CPU clock of its process says so (``time.process_time`` for its
own, ``os.times`` children fields for what it waited for), so the expected figure does not
depend on how busy the machine is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from activities.sandbox.hierarchy import CgroupSupport
from activities.sandbox.job import Sandbox
from tests.activities.sandbox.test_sandbox import run

BURN = """
import time
start = time.process_time()
while time.process_time() - start < {seconds}:
    pass
"""
# The job's own process idles; a child it starts and waits for does the burning.
BURN_IN_CHILD = """
import subprocess, sys
subprocess.run([sys.executable, "-c", {code!r}], check=True)
"""
SLEEP = "import time\ntime.sleep({seconds})\n"


@pytest.fixture
def sandbox(work_dir: Path) -> Sandbox:
    return Sandbox(work_dir=work_dir, heartbeat_every_s=0.2)


async def test_a_busy_job_reports_the_cpu_time_it_burned(sandbox: Sandbox) -> None:
    outcome = await run(sandbox, BURN.format(seconds=0.5), timeout_s=20.0)
    assert outcome.outcome == "succeeded", outcome.reason
    # 0.5 s of loop plus the interpreter's start-up, never the worker's own time.
    assert 0.5 <= outcome.cpu_s < 1.5, outcome.cpu_s


async def test_cpu_time_of_the_processes_a_job_starts_is_counted(sandbox: Sandbox) -> None:
    code = BURN_IN_CHILD.format(code=BURN.format(seconds=0.5))
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.outcome == "succeeded", outcome.reason + outcome.stderr_tail
    assert 0.5 <= outcome.cpu_s < 2.0, outcome.cpu_s


async def test_a_sleeping_job_reports_next_to_no_cpu_time(sandbox: Sandbox) -> None:
    outcome = await run(sandbox, SLEEP.format(seconds=0.6), timeout_s=20.0)
    assert outcome.outcome == "succeeded", outcome.reason
    assert outcome.duration_s >= 0.6
    assert 0 <= outcome.cpu_s < 0.4, outcome.cpu_s


async def test_concurrent_jobs_do_not_see_each_others_cpu_time(sandbox: Sandbox) -> None:
    # Run in worker threads as the activity worker does; the sleeper overlaps the burner.
    busy, idle = await asyncio.gather(
        run(sandbox, BURN.format(seconds=1.0), task="busy", timeout_s=20.0),
        run(sandbox, SLEEP.format(seconds=1.5), task="idle", timeout_s=20.0))
    assert busy.outcome == idle.outcome == "succeeded", busy.reason + idle.reason
    assert 1.0 <= busy.cpu_s < 2.0, busy.cpu_s
    assert idle.cpu_s < 0.4, idle.cpu_s


async def test_a_job_killed_at_its_timeout_still_reports_its_cpu_time(sandbox: Sandbox) -> None:
    outcome = await run(sandbox, "while True:\n    pass\n", timeout_s=1.0)
    assert outcome.outcome == "timeout"
    # One busy thread for a second of wall time; less CPU if the machine is shared.
    assert 0.1 <= outcome.cpu_s <= 1.5, outcome.cpu_s


async def test_without_a_cgroup_the_cpu_time_is_still_the_jobs(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, heartbeat_every_s=0.2,
                      cgroups=CgroupSupport.unavailable("cgroups switched off for this test"))
    busy = await run(sandbox, BURN_IN_CHILD.format(code=BURN.format(seconds=1.0)),
                     timeout_s=20.0)
    idle = await run(sandbox, SLEEP.format(seconds=0.6), task="idle", timeout_s=20.0)
    assert busy.outcome == idle.outcome == "succeeded", busy.reason + idle.reason
    # Under bubblewrap the last stretch before the job's end (at most a tick of 0.2 s) is lost.
    assert 0.5 <= busy.cpu_s < 2.5, busy.cpu_s
    assert idle.cpu_s < 0.4, idle.cpu_s
