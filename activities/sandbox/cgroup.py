"""One control group per job: a memory, process and CPU budget for all of its processes together.

Per-process rlimits bound each process of a job, not the job: six processes of 800 MB each pass
a 1 GB address-space limit. A cgroup bounds their sum. Where the machine allows (see
:mod:`activities.sandbox.hierarchy`), each job gets a cgroup below the worker's own with
``resources.memory_mb`` (swap included), the process limit and ``resources.cpus`` as a CPU
quota. The job's first process joins it before it ``exec``s the sandbox (see
:meth:`JobCgroup.join_argv`), so everything the job starts is inside.

How it joins matters for every job's start. Writing a process id to ``cgroup.procs`` takes the
kernel's lock on every thread group for writing, which first waits for an RCU grace period
(about 10 ms here, with no CPU spent) unless another such write came within the last one. Under
v1 the first process writes ``0`` to each hierarchy's ``tasks`` instead: it moves its only
thread, itself, which the kernel does without that lock (measured on Linux 6.18: a job's
spawn-to-exit fell from 33-38 ms to 23 ms, as without a cgroup; a kernel that takes the lock
anyway only loses the saving). Under v2 ``cgroup.procs`` is the only way in, and the wait
stays.

Afterwards the cgroup's peak memory, out-of-memory kills and CPU time are read and the cgroup
is removed, after killing whatever is left in it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from activities.sandbox.hierarchy import (
    CgroupSupport,
    read_value,
    remove_dir,
    worker_id,
    write_value,
)
from activities.sandbox.limits import Limits

_PERIOD_US = 100_000
_SANDBOX_PROCESSES = 2
"""bubblewrap's own processes (its monitor and the pid namespace's init) in the job's cgroup."""
_MIB = 1 << 20
_REMOVE_TRIES = 100
_REMOVE_PAUSE_S = 0.02
_counter = itertools.count(1)
# Writes $1 (``self``: the shell's own pid) to each of the $2 cgroup files that follow, then
# runs the rest of the command in the same process.
_JOIN = ('v=$1; [ "$v" = self ] && v=$$; n=$2; shift 2; while [ "$n" -gt 0 ]; do '
         'echo "$v" > "$1" || exit 125; n=$((n - 1)); shift; done; exec "$@"')


class CgroupError(OSError):
    """A job's cgroup could not be set up; the message says where and why."""


@dataclass(frozen=True)
class CgroupUsage:
    """What a job's cgroup recorded.

    Peak memory (if the kernel keeps one), out-of-memory kills, and the CPU time of all its
    processes where the cgroup accounts it (always under v2; under v1 with ``cpuacct``).
    """

    peak_bytes: int | None
    oom_kills: int
    cpu_s: float | None = None


class JobCgroup:
    """The cgroup of one running job (one directory per v1 hierarchy, one under v2)."""

    def __init__(self, support: CgroupSupport, dirs: dict[str, Path]) -> None:
        self.version = support.version
        self.dirs = dirs

    @property
    def name(self) -> str:
        """The cgroup's name (the same in every hierarchy)."""
        return self.dirs["memory"].name

    @classmethod
    def create(cls, support: CgroupSupport, limits: Limits) -> JobCgroup:
        """Make the job's cgroup and set its limits.

        Raises:
            CgroupError: a directory or a limit could not be written.
        """
        name = f"assay-job-{worker_id()}-{next(_counter)}"
        made = cls(support, {c: parent / name for c, parent in support.parents.items()})
        made.remove()  # a directory left by a dead worker that had this pid
        try:
            for path in made.paths:
                path.mkdir()
            made._set_limits(limits)
        except OSError as err:
            made.remove()
            raise CgroupError(f"cannot set up the job's cgroup {name}: {err}") from err
        return made

    @property
    def paths(self) -> list[Path]:
        """The distinct directories of this cgroup."""
        return list(dict.fromkeys(self.dirs.values()))

    def _set_limits(self, limits: Limits) -> None:
        memory = str(limits.memory_mb * _MIB)
        pids = str(limits.processes + _SANDBOX_PROCESSES)
        quota = max(1000, round(limits.cpus * _PERIOD_US))
        if self.version == 2:
            settings = {"memory": [("memory.max", memory), ("memory.swap.max?", "0")],
                        "pids": [("pids.max", pids)],
                        "cpu": [("cpu.max", f"{quota} {_PERIOD_US}")]}
        else:
            settings = {"memory": [("memory.limit_in_bytes", memory),
                                   ("memory.memsw.limit_in_bytes?", memory)],
                        "pids": [("pids.max", pids)],
                        "cpu": [("cpu.cfs_period_us", str(_PERIOD_US)),
                                ("cpu.cfs_quota_us", str(quota))],
                        "cpuacct": []}
        for controller, path in self.dirs.items():
            for filename, value in settings[controller]:
                target = path / filename.rstrip("?")
                # "?": a swap limit exists only where the kernel accounts swap.
                if not filename.endswith("?") or target.exists():
                    write_value(target, value)

    def join_argv(self) -> list[str]:
        """Command prefix: the process joins this cgroup, then ``exec``s the rest of the command.

        Under v1 it writes ``0`` (itself, a single thread) to ``tasks``; under v2 its process id
        to ``cgroup.procs`` (see the module's doc for why).
        """
        value, name = ("0", "tasks") if self.version == 1 else ("self", "cgroup.procs")
        files = [str(path / name) for path in self.paths]
        return ["/bin/sh", "-c", _JOIN, "assay-cgroup", value, str(len(files)), *files]

    def usage(self) -> CgroupUsage:
        """Peak memory, out-of-memory kills and CPU time so far."""
        memory = self.dirs["memory"]
        if self.version == 2:
            peak = read_value(memory / "memory.peak")
            return CgroupUsage(int(peak) if peak else None,
                               _field(read_value(memory / "memory.events"), "oom_kill") or 0,
                               self._cpu_s())
        oom = _field(read_value(memory / "memory.oom_control"), "oom_kill")
        if oom is None:  # kernels before 4.13 count no kills: a hit limit is the best sign
            oom = int(read_value(memory / "memory.failcnt") or 0)
        return CgroupUsage(int(read_value(memory / "memory.max_usage_in_bytes") or 0), oom,
                           self._cpu_s())

    def _cpu_s(self) -> float | None:
        """CPU seconds of every process the cgroup held, or ``None`` where it keeps no count."""
        if self.version == 2:
            usec = _field(read_value(self.dirs["memory"] / "cpu.stat"), "usage_usec")
            return None if usec is None else usec / 1e6
        where = self.dirs.get("cpuacct")
        nanoseconds = "" if where is None else read_value(where / "cpuacct.usage")
        return int(nanoseconds) / 1e9 if nanoseconds.isdigit() else None

    def remove(self) -> None:
        """Kill whatever is left in the cgroup and remove it (best effort, never raises)."""
        for _ in range(_REMOVE_TRIES):
            self._kill_all()
            if all(remove_dir(path) for path in self.paths):
                return
            time.sleep(_REMOVE_PAUSE_S)  # killed processes are still exiting

    def _kill_all(self) -> None:
        for path in self.paths:
            kill = path / "cgroup.kill"
            if kill.exists():
                with contextlib.suppress(OSError):
                    write_value(kill, "1")
                continue
            for pid in read_value(path / "cgroup.procs").split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)


def sweep_stale(support: CgroupSupport) -> None:
    """Remove empty job cgroups left by dead workers of this pid namespace.

    Their jobs died with them (``--die-with-parent``, ``--pdeathsig``), so only the empty
    directories remain; a cgroup that still holds processes is left alone.
    """
    namespace = os.stat("/proc/self/ns/pid").st_ino
    stale = re.compile(rf"assay-(?:job|probe)-{namespace}-(\d+)(?:-\d+)?")
    for parent in set(support.parents.values()):
        with contextlib.suppress(OSError):
            for entry in parent.iterdir():
                found = stale.fullmatch(entry.name)
                if (found and not _alive(int(found[1]))
                        and not read_value(entry / "cgroup.procs")):
                    remove_dir(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _field(text: str, key: str) -> int | None:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return None
