"""The per-job disk quota: how much a job's working directory may grow while it runs.

The file-size rlimit caps one file; this caps the total, in allocated blocks and in files.
A mounted file system of fixed size (a tmpfs, a loop device) would enforce it in the kernel,
but a tmpfs is RAM charged to the job's memory and vanishes with the sandbox (verification
reads the directory afterwards), and loop devices are missing in most containers. So the
sandbox measures: on every tick while the job runs, a thread walks the working directory
(:func:`activities.common.trees.walk`: bounded, no links followed, the job's ``/tmp`` and
``HOME`` included) and adds up the disk blocks each inode holds (``st_blocks``, so a sparse
file counts for what it allocates, not its apparent size; what it would weigh when read back
is bounded where artifacts are stored, :mod:`activities.sandbox.artifacts`) and the entries
(files, directories and links: each costs an inode and a walk's time). The job is stopped
once its growth since it started passes either quota, or once its tree is deeper than a walk
may go. A job can overshoot by what it writes between two measurements (a tick, at most
``heartbeat_every_s``); the free-space reserve stays the last guard of the disk itself.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.common.trees import TreeLimitError, walk
from workflows.contracts.errors import ErrorType

_MIB = 1 << 20
_BLOCK = 512
_ENOUGH = 10_000_000
"""Entries a measurement walks at most when no file quota is set."""


@dataclass(frozen=True)
class Usage:
    """What a directory holds.

    Attributes:
        allocated: bytes of disk allocated to it (each inode once, the root included).
        entries: files, directories and links below it (up to the walk's budget, plus one).
        too_deep: why it could not be walked to the end (nested too deep), else empty.
    """

    allocated: int
    entries: int
    too_deep: str = ""


def disk_usage(root: Path, max_entries: int = _ENOUGH) -> Usage:
    """What ``root`` holds; stops counting entries after ``max_entries``."""
    seen: set[tuple[int, int]] = set()
    allocated = entries = 0
    try:
        for found in walk(root, max_entries=max_entries, on_error=lambda _rel, _err: None):
            entries += 1
            try:
                info = found.entry.stat(follow_symlinks=False)
            except OSError:
                continue  # removed meanwhile
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                allocated += info.st_blocks * _BLOCK
    except TreeLimitError as err:
        if err.kind == "depth":
            return Usage(allocated, entries, str(err))
        entries = max_entries + 1
    except OSError:
        pass  # the root itself is gone or unreadable: what was counted is all there is
    try:
        return Usage(allocated + root.lstat().st_blocks * _BLOCK, entries)
    except OSError:
        return Usage(allocated, entries)


def free_mb(path: Path) -> int:
    """MiB free to unprivileged writers on the disk of ``path`` (or its nearest parent)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize // _MIB


def lowest(disks: Sequence[tuple[str, Path]]) -> tuple[str, Path, int]:
    """The disk with the least free space: what it holds, its path and its free MiB."""
    return min(((what, path, free_mb(path)) for what, path in disks), key=lambda d: d[2])


def refuse_when_full(disks: Sequence[tuple[str, Path]], reserve_mb: int) -> None:
    """Refuse to start a job while a disk it writes to is below the free-space reserve.

    Raises:
        ApplicationError: ``DiskFull`` (retried with backoff: space may be freed meanwhile).
    """
    what, path, free = lowest(disks)
    if free < reserve_mb:
        raise ApplicationError(
            f"only {free} MiB free on the disk of {what} ({path}); the sandbox starts no job "
            f"below {reserve_mb} MiB (ASSAY_MIN_FREE_DISK_MB). Free some space there (old "
            "runs' working directories and environments live in the data directory); the "
            "job starts once there is", type=ErrorType.DISK_FULL)


class DiskWatch:
    """Measures one job's working directory in the background; says when it broke a quota.

    Args:
        root: the working directory.
        baseline: what it held before the job started (inputs and the job file).
        quota_mb: how much it may grow; 0 turns that quota off.
        max_files: how many entries it may gain; 0 turns that quota off.
    """

    def __init__(self, root: Path, baseline: Usage, quota_mb: int, max_files: int = 0) -> None:
        self._root = root
        self._baseline = baseline
        self._quota = quota_mb * _MIB
        self._max_files = max_files
        self._measuring: asyncio.Future[Usage] | None = None
        self.grown = 0
        self.files = 0
        self.too_deep = ""

    def over(self) -> str | None:
        """The quota the last finished measurement broke, if any; starts the next one.

        Called from the event loop on every tick; the walk itself runs in a thread. The
        words are those of :func:`activities.sandbox.classify.classify`: ``disk_quota``,
        ``file_quota`` or ``tree_depth``.
        """
        if self._measuring is not None and self._measuring.done():
            self._record(self._measuring.result())
            self._measuring = None
        if self._measuring is None:
            self._measuring = asyncio.get_running_loop().run_in_executor(None, self._measure)
        return self._verdict()

    def final(self) -> str | None:
        """Measure once more after the job ended (blocking); the quota it broke, if any."""
        self._record(self._measure())
        return self._verdict()

    def _measure(self) -> Usage:
        budget = self._baseline.entries + self._max_files if self._max_files else _ENOUGH
        return disk_usage(self._root, budget)

    def _record(self, used: Usage) -> None:
        self.grown = max(self.grown, used.allocated - self._baseline.allocated)
        self.files = max(self.files, used.entries - self._baseline.entries)
        self.too_deep = self.too_deep or used.too_deep

    def _verdict(self) -> str | None:
        if self.too_deep:
            return "tree_depth"
        if self._quota and self.grown > self._quota:
            return "disk_quota"
        if self._max_files and self.files > self._max_files:
            return "file_quota"
        return None

    @property
    def grown_mb(self) -> float:
        """The largest growth measured, in MiB."""
        return round(self.grown / _MIB, 1)
