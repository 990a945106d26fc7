"""Working directories are removed once their run is finished and older than the retention.

Every attempt of every task leaves a directory under ``work_dir/<run_id>/`` that reports
and verification point into (artifacts are read where the job wrote them), so nothing of a run
that may still need them is touched: only runs that Temporal reports closed (or no longer
knows, because its own retention dropped them) whose last write and close are both older
than ``retention_s``. A run's earlier attempts are kept with it: a retry that regresses is
rolled back to the attempt before it, whose directory then holds the task's evidence.
The sandbox worker sweeps when it starts and then periodically (:class:`WorkspaceJanitor`);
a run whose directory cannot be removed is logged and tried again at the next sweep, and a
sweep that fails is logged and followed by the next one: the janitor never stops on an error.
Trees are removed by :func:`activities.common.trees.remove_tree` (any depth, no link
followed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from activities.common.trees import remove_tree

log = logging.getLogger("assay.sandbox")

ClosedAt = Callable[[str], Awaitable[float | None]]
"""When run ``run_id`` closed (seconds since the epoch; 0 if the server no longer knows it),
or ``None`` while it is open."""


class WorkspaceJanitor:
    """Sweeps the sandbox's work directory for runs past their retention.

    Args:
        work_dir: the sandbox's work directory (``<run_id>/<task_id>/attempt-<n>``).
        retention_s: how long a finished run's directories are kept.
        closed_at: tells when a run closed (see :data:`ClosedAt`).
    """

    def __init__(self, work_dir: Path, *, retention_s: float, closed_at: ClosedAt) -> None:
        self._work_dir = work_dir.expanduser().resolve()
        self._retention_s = retention_s
        self._closed_at = closed_at
        self._task: asyncio.Task[None] | None = None

    async def sweep(self, now: float | None = None) -> list[str]:
        """Remove every run directory past its retention; the run ids removed."""
        now = time.time() if now is None else now
        removed: list[str] = []
        for run_dir in await asyncio.to_thread(self._run_dirs):
            try:
                if await self._expired(run_dir, now):
                    await asyncio.to_thread(remove_tree, run_dir)
                    removed.append(run_dir.name)
            except RPCError as err:
                log.warning("workspace retention: cannot ask about run %s: %s", run_dir.name, err)
            except Exception:  # one run's tree must not stop the others' removal
                log.exception("workspace retention: cannot remove the directory of run %s "
                              "(%s); it is tried again at the next sweep", run_dir.name, run_dir)
        if removed:
            log.info("workspace retention: removed the directories of %d finished run(s): %s",
                     len(removed), ", ".join(removed))
        return removed

    async def _expired(self, run_dir: Path, now: float) -> bool:
        last_write = await asyncio.to_thread(_last_write, run_dir)
        if now - last_write < self._retention_s:
            return False  # too recent whatever the run's state: no need to ask
        closed = await self._closed_at(run_dir.name)
        return closed is not None and now - max(closed, last_write) >= self._retention_s

    def _run_dirs(self) -> list[Path]:
        if not self._work_dir.is_dir():
            return []
        return sorted(path for path in self._work_dir.iterdir()
                      if not path.name.startswith(".") and path.is_dir()
                      and not path.is_symlink())

    def start(self, every_s: float) -> None:
        """Sweep now and then every ``every_s`` seconds, in the background, until :meth:`stop`."""
        self._task = asyncio.get_running_loop().create_task(self._loop(every_s))

    async def _loop(self, every_s: float) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:  # whatever failed this sweep, the next one may work
                log.exception("workspace retention: the sweep of %s failed; the next runs in "
                              "%g s", self._work_dir, every_s)
            await asyncio.sleep(every_s)

    async def stop(self) -> None:
        """Stop sweeping."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def _last_write(run_dir: Path) -> float:
    """Newest modification time of the run's, its tasks' and its attempts' directories."""
    newest = run_dir.lstat().st_mtime
    for task in _subdirs(run_dir):
        newest = max(newest, task.stat(follow_symlinks=False).st_mtime)
        for attempt in _subdirs(Path(task.path)):
            newest = max(newest, attempt.stat(follow_symlinks=False).st_mtime)
    return newest


def _subdirs(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def temporal_closed_at(client: Client) -> ClosedAt:
    """:data:`ClosedAt` answered by the Temporal server (a run's id is its workflow id)."""
    async def closed_at(run_id: str) -> float | None:
        try:
            described = await client.get_workflow_handle(run_id).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return 0.0
            raise
        if described.status in (None, WorkflowExecutionStatus.RUNNING):
            return None
        return described.close_time.timestamp() if described.close_time else 0.0

    return closed_at
