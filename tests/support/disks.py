"""Disks and trees for the tests that attack them: a small tmpfs, a tree nested too deep.

One place for both, so the sandbox's, the stack's and the readers' tests make them alike.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Generator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(mount: Path, *, fill: bool = False) -> Generator[Path]:
    """A 1 MiB tmpfs at ``mount`` (made), filled up with ``fill``; skips where none mounts."""
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.decode().strip()}")
    try:
        if fill:
            with open(mount / "filler", "wb") as filler, contextlib.suppress(OSError):
                filler.write(b"x" * (2 << 20))  # more than fits: the disk is full
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def nest(top: Path, depth: int, name: str = "d") -> None:
    """Make ``depth`` directories ``name`` one inside the other under ``top``.

    Each is made relative to the one above it, so no path grows past what the kernel takes.
    """
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
