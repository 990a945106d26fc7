"""Working directories of finished runs go once older than the retention; nothing else does."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.common.trees import remove_tree
from activities.sandbox.retention import WorkspaceJanitor, temporal_closed_at
from tests.support.waiting import wait_for

DAY = 24 * 3600.0
NOW = time.time()


def attempt(work_dir: Path, run_id: str, written: float, *, task: str = "t1",
            n: int = 1) -> Path:
    """An attempt's directory with one artifact, last written at ``written``."""
    path = work_dir / run_id / task / f"attempt-{n}"
    path.mkdir(parents=True, exist_ok=True)
    (path / "result.csv").write_text("a,b\n")
    for directory in (path, path.parent, path.parent.parent):
        os.utime(directory, (written, written))
    return path


async def test_only_finished_runs_past_the_retention_are_removed(tmp_path: Path) -> None:
    closed = {"finished": NOW - 8 * DAY, "running": None, "recent": NOW - 8 * DAY,
              "closed-yesterday": NOW - 1 * DAY, "forgotten": 0.0, "retried": NOW - 8 * DAY}
    asked: list[str] = []

    async def closed_at(run_id: str) -> float | None:
        asked.append(run_id)
        return closed[run_id]

    for run_id in ("finished", "running", "closed-yesterday", "forgotten"):
        attempt(tmp_path, run_id, NOW - 9 * DAY)
    attempt(tmp_path, "recent", NOW - 3600)
    attempt(tmp_path, "retried", NOW - 9 * DAY)
    newest = attempt(tmp_path, "retried", NOW - 3600, n=2)  # e.g. after a workflow reset
    os.utime(tmp_path / "retried", (NOW - 9 * DAY, NOW - 9 * DAY))

    janitor = WorkspaceJanitor(tmp_path, retention_s=7 * DAY, closed_at=closed_at)
    removed = await janitor.sweep(now=NOW)

    assert sorted(removed) == ["finished", "forgotten"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["closed-yesterday", "recent",
                                                           "retried", "running"]
    assert (newest / "result.csv").exists()
    assert "recent" not in asked and "retried" not in asked, "recent writes need no question"


async def test_a_run_that_cannot_be_asked_about_is_kept(tmp_path: Path) -> None:
    from temporalio.service import RPCError, RPCStatusCode

    async def unreachable(run_id: str) -> float | None:
        raise RPCError("connection refused", RPCStatusCode.UNAVAILABLE, b"")

    attempt(tmp_path, "finished", NOW - 9 * DAY)
    janitor = WorkspaceJanitor(tmp_path, retention_s=7 * DAY, closed_at=unreachable)
    assert await janitor.sweep(now=NOW) == []
    assert (tmp_path / "finished").exists()


def nest(path: Path, levels: int) -> None:
    """``levels`` directories inside ``path``, as a job that nests them leaves them."""
    fd = os.open(path, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


async def test_a_run_with_a_deep_tree_is_removed_and_one_that_fails_does_not_stop_the_sweep(
        tmp_path: Path) -> None:
    async def closed_at(run_id: str) -> float | None:
        if run_id == "broken":
            raise ValueError("an answer the janitor did not expect")
        return NOW - 8 * DAY

    nest(attempt(tmp_path, "deep", NOW), 1500)
    attempt(tmp_path, "deep", NOW - 9 * DAY)  # last written nine days ago
    for run_id in ("broken", "plain"):
        attempt(tmp_path, run_id, NOW - 9 * DAY)
    janitor = WorkspaceJanitor(tmp_path, retention_s=7 * DAY, closed_at=closed_at)
    try:
        assert await janitor.sweep(now=NOW) == ["deep", "plain"]
        assert [p.name for p in tmp_path.iterdir()] == ["broken"]
    finally:
        remove_tree(tmp_path / "deep")  # pytest's own clean-up would recurse


class FailsOnce(WorkspaceJanitor):
    """A janitor whose first sweep raises what no one foresaw; counts its sweeps."""

    sweeps = 0

    async def sweep(self, now: float | None = None) -> list[str]:
        self.sweeps += 1
        if self.sweeps == 1:
            raise RecursionError("maximum recursion depth exceeded")
        return await super().sweep(now)


async def test_the_janitor_keeps_sweeping_after_any_error(tmp_path: Path) -> None:
    async def closed_at(run_id: str) -> float | None:
        return NOW - 8 * DAY

    attempt(tmp_path, "finished", NOW - 9 * DAY)
    janitor = FailsOnce(tmp_path, retention_s=7 * DAY, closed_at=closed_at)
    janitor.start(every_s=0.01)
    try:
        await wait_for(lambda: not (tmp_path / "finished").exists(), timeout=5,
                       what="the janitor to remove the finished attempt")
    finally:
        await janitor.stop()
    assert janitor.sweeps >= 2


@pytest.mark.integration
async def test_temporal_says_which_runs_are_closed(dev_env: WorkflowEnvironment) -> None:
    """On the dev server: on the shared time-skipping server, a workflow started with no
    worker to serve it kept later tests' timers from firing."""
    client = dev_env.client
    closed_at = temporal_closed_at(client)
    run_id = f"assay-run-retention-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow("NoWorkerServesThis", id=run_id,
                                         task_queue=f"retention-{uuid.uuid4().hex[:8]}")
    assert await closed_at(run_id) is None
    await handle.terminate("test")
    closed = await closed_at(run_id)
    assert closed is not None and closed > 0
    assert await closed_at(f"assay-run-never-started-{uuid.uuid4().hex[:8]}") == 0.0
