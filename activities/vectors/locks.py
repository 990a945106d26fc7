"""Who holds qdrant-client's local storage: local mode locks its directory for one process.

Asking first spares a refused open (which leaves the lock file's handle open in the asking
process) and lets a message name the process that holds it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def lock_holder(path: Path) -> tuple[bool, int | None]:
    """Whether Qdrant's local storage at ``path`` is locked, and by which pid if known."""
    lock_file = path / ".lock"
    if not lock_file.exists():
        return False, None
    with lock_file.open("r+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True, flock_owner(lock_file)
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False, None


def flock_owner(lock_file: Path) -> int | None:
    """The pid holding a flock on ``lock_file`` (a file or directory), from /proc/locks."""
    st = lock_file.stat()
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == key:
            return int(fields[4])
    return None
