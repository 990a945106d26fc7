"""The per-job disk quota: how much a job's working directory may grow while it runs.

The file-size rlimit caps one file; this caps the total. A mounted file system of fixed size
(a tmpfs, a loop device) would enforce it in the kernel, but a tmpfs is RAM charged to the
job's memory and vanishes with the sandbox (verification reads the directory afterwards), and
loop devices are missing in most containers. So the sandbox measures: on every tick while the
job runs, a thread adds up the disk blocks of everything under the working directory (each
inode once, symbolic links not followed, the job's ``/tmp`` and ``HOME`` included), and the
job is stopped once the growth since it started passes its quota. A job can overshoot by
what it writes between two measurements (a tick, at most ``heartbeat_every_s``); the free-space
reserve stays the last guard of the disk itself.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

_MIB = 1 << 20
_BLOCK = 512


def disk_usage(root: Path) -> int:
    """Bytes of disk allocated to everything below ``root`` (itself included)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [str(root)]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # removed meanwhile, or not a directory any more
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * _BLOCK
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)
    try:
        return total + os.lstat(root).st_blocks * _BLOCK
    except OSError:
        return total


class DiskWatch:
    """Measures one job's working directory in the background; says when it outgrew its quota.

    Args:
        root: the working directory.
        baseline: its size before the job started (inputs and the job file).
        quota_mb: how much it may grow; 0 turns the watch off.
    """

    def __init__(self, root: Path, baseline: int, quota_mb: int) -> None:
        self._root = root
        self._baseline = baseline
        self._quota = quota_mb * _MIB
        self._measuring: asyncio.Future[int] | None = None
        self.grown = 0

    def over(self) -> bool:
        """Whether the last finished measurement passed the quota; starts the next one.

        Called from the event loop on every tick; the walk itself runs in a thread.
        """
        if not self._quota:
            return False
        if self._measuring is not None and self._measuring.done():
            self._record(self._measuring.result())
            self._measuring = None
        if self._measuring is None:
            self._measuring = asyncio.get_running_loop().run_in_executor(
                None, disk_usage, self._root)
        return self.grown > self._quota

    def final(self) -> bool:
        """Measure once more after the job ended (blocking); whether it passed the quota."""
        if not self._quota:
            return False
        self._record(disk_usage(self._root))
        return self.grown > self._quota

    def _record(self, used: int) -> None:
        self.grown = max(self.grown, used - self._baseline)

    @property
    def grown_mb(self) -> float:
        """The largest growth measured, in MiB."""
        return round(self.grown / _MIB, 1)
