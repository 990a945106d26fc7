"""The sandbox pool sweeps finished runs' working directories once it polls."""

from __future__ import annotations

import os
import time
from contextlib import AsyncExitStack
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import isolated_settings
from tests.support.waiting import wait_for
from workers.pools.builders import build_specs
from workflows.contracts.pools import Pool


def attempt_written(work_dir: Path, run_id: str, written: float) -> Path:
    path = work_dir / run_id / "t1" / "attempt-1"
    path.mkdir(parents=True)
    for directory in (path, path.parent, path.parent.parent):
        os.utime(directory, (written, written))
    return path.parent.parent


async def test_the_sandbox_pool_removes_runs_past_the_retention_when_it_starts(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path, "retention").model_copy(
        update={"work_retention_hours": 1.0})
    # The server has never heard of either run: finished, as far as anyone can tell.
    gone = attempt_written(settings.work_dir, "assay-run-long-gone-0123456789", time.time() - 7200)
    fresh = attempt_written(settings.work_dir, "assay-run-just-ended-0123456789", time.time())
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, [Pool.SANDBOX], database_url="unused", stack=stack)
        start = specs[Pool.SANDBOX].on_start
        assert start is not None
        await start(time_env.client)
        await wait_for(lambda: not gone.exists(), timeout=10, what="the old run's removal")
    assert fresh.exists()
