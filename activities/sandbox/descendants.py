"""Which processes descend from a job's first one, read down the tree from it.

Each tick of a running job samples its processes (:mod:`activities.sandbox.process`). Each
thread's ``/proc/<pid>/task/<tid>/children`` lists the children it started, so walking down
from the job's first process reads a file per thread of the job's own processes and nothing
of the rest of the machine. ``psutil``'s ``children`` reads every process's ``stat`` instead:
its cost grows with everything the host runs, at every tick of every job.
"""

from __future__ import annotations

import functools
import os
import threading

MAX_FOUND = 10_000
"""Descendants one walk returns at most (a job's process limit keeps it far below)."""


def descendants(pid: int) -> list[int] | None:
    """The ids of the live descendants of ``pid``: its children, theirs, and so on.

    A process that ends or is re-parented during the walk is missed, as it would be by a
    sample a moment later. None: the kernel has no such files (one built without
    ``CONFIG_PROC_CHILDREN``); the caller asks ``psutil``.
    """
    if not _children_files():
        return None
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < MAX_FOUND:
        parent = todo.pop()
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:  # it ended meanwhile
            continue
        for thread in threads:
            try:
                with open(f"/proc/{parent}/task/{thread}/children", encoding="ascii") as kids:
                    children = [int(kid) for kid in kids.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            todo += children
    return found[:MAX_FOUND]


@functools.cache
def _children_files() -> bool:
    """Whether the kernel lists each thread's children under ``/proc`` (read once)."""
    return os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children")
