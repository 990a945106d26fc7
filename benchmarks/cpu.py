"""Where the CPU of a burst of runs goes: the workers' process, Temporal's server, PostgreSQL, jobs.

Throughput on a machine of two cores is bounded by the CPU each run takes, summed over every
process that serves it. :func:`cpu_seconds` reads the cumulative CPU of each kind of process
(``psutil``); the difference of two readings over a burst, divided by its runs, is what one run
costs each of them. Jobs are the processes the worker started and reaped (``RUSAGE_CHILDREN``:
their whole tree, bubblewrap included). Of the workers' CPU, the time its garbage collections
took is counted apart too (``collecting``, timed by a ``gc`` callback): every thread of the
process waits for a collection.
"""

from __future__ import annotations

import gc
import resource
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psutil

KINDS = ("workers", "temporal", "postgres", "jobs")
"""The processes told apart: this benchmark's own (the workers, the floor's too), Temporal's
dev server, PostgreSQL's, and the jobs (sandboxed or the floor's ``python``)."""


class _Collections:
    """Seconds this process has spent in garbage collections since the module was imported."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._began


_COLLECTIONS = _Collections()
gc.callbacks.append(_COLLECTIONS)


def cpu_seconds(pg_pid: int | None) -> dict[str, float]:
    """Cumulative CPU seconds of each kind of process, now."""
    me = psutil.Process()
    out: dict[str, float] = dict.fromkeys(KINDS, 0.0)
    out["workers"] = _cpu(me)
    for child in me.children(recursive=True):
        if "temporal" in _name(child):
            out["temporal"] += _cpu(child)
    if pg_pid is not None:
        try:
            postmaster = psutil.Process(pg_pid)
            out["postgres"] = _cpu(postmaster) + sum(
                _cpu(p) for p in postmaster.children(recursive=True))
        except psutil.Error:
            pass
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["jobs"] = usage.ru_utime + usage.ru_stime
    return out


async def per_run(burst: Callable[[], Awaitable[Any]], runs: int,
                  pg_pid: int | None) -> dict[str, float]:
    """Run ``burst`` (``runs`` runs); milliseconds of CPU each kind spent per run, and
    ``collecting``: of the workers' milliseconds, those in garbage collections."""
    before, collected = cpu_seconds(pg_pid), _COLLECTIONS.seconds
    await burst()
    after = cpu_seconds(pg_pid)
    spent = {kind: (after[kind] - before[kind]) * 1000 / runs for kind in KINDS}
    return spent | {"collecting": (_COLLECTIONS.seconds - collected) * 1000 / runs}


def _cpu(process: psutil.Process) -> float:
    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


def _name(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.Error:
        return ""
