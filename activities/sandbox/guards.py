"""What bounds a job as a whole, set up by the worker around the job's command.

The per-process limits travel inside the command (see :mod:`activities.sandbox.limits`); these
guards cover the job as a whole: its cgroup (one memory, process and CPU budget for all its
processes; :mod:`activities.sandbox.cgroup`), the seccomp filter that denies it user namespaces
(:mod:`activities.sandbox.seccomp`) and the quota on its working directory
(:mod:`activities.sandbox.quota`). :class:`JobGuards` makes them before the job starts, checks
the quota on every tick, reads what the job used as a whole once it ended, and removes the
cgroup whatever happened.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from temporalio.exceptions import ApplicationError

from activities.sandbox.cgroup import CgroupError, JobCgroup
from activities.sandbox.isolation import IsolationStatus
from activities.sandbox.limits import Limits
from activities.sandbox.quota import DiskWatch, Usage
from activities.sandbox.seccomp import filter_fd
from workflows.contracts.errors import ErrorType


@dataclass(frozen=True)
class Totals:
    """What the job as a whole used.

    Attributes:
        peak_memory_kb: peak memory of the job's cgroup (all processes together), if known.
        oom_kills: processes killed because the cgroup ran out of memory.
        over_quota: the quota of its working directory it broke (``disk_quota``,
            ``file_quota`` or ``tree_depth``), if any.
        disk_grown_mb: the largest growth of the working directory measured.
        cgroup: ``; in cgroup <name>`` for the execution record, or empty without one.
        cpu_s: CPU seconds of all the cgroup's processes, where it accounts them.
    """

    peak_memory_kb: int | None
    oom_kills: int
    over_quota: str | None
    disk_grown_mb: float
    cgroup: str = ""
    cpu_s: float | None = None


class JobGuards:
    """The cgroup, seccomp filter and disk watch of one job (a context manager).

    Args:
        status: what the sandbox can do on this machine.
        workspace: the job's working directory.
        limits: the job's limits.
        baseline: what the working directory held before the job started.
    """

    def __init__(self, status: IsolationStatus, workspace: Path, limits: Limits,
                 baseline: Usage) -> None:
        self._status = status
        self._limits = limits
        self._watch = DiskWatch(workspace, baseline, limits.disk_mb, limits.files)
        self._exits = ExitStack()
        self.cgroup: JobCgroup | None = None
        self.seccomp_fd: int | None = None

    def __enter__(self) -> JobGuards:
        with ExitStack() as undo:
            if self._status.mode == "bwrap":
                self.seccomp_fd = undo.enter_context(filter_fd())
            if self._status.cgroups.available:
                self.cgroup = _make_cgroup(self._status, self._limits)
                undo.callback(self.cgroup.remove)
            self._exits = undo.pop_all()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Remove the cgroup (killing what is left in it) and close the filter.

        This blocks while the kernel lets go of processes still exiting, so the sandbox calls
        it in a thread.
        """
        self._exits.close()

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """Descriptors the job's first process must inherit."""
        return () if self.seccomp_fd is None else (self.seccomp_fd,)

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the job's cgroup (where it has one)."""
        return argv if self.cgroup is None else [*self.cgroup.join_argv(), *argv]

    def tick(self) -> str | None:
        """The quota of the working directory the job broke (see :meth:`DiskWatch.over`)."""
        return self._watch.over()

    def totals(self) -> Totals:
        """What the job used as a whole; call after it ended (blocks for one directory walk)."""
        over = self._watch.final()
        if self.cgroup is None:
            return Totals(None, 0, over, self._watch.grown_mb)
        usage = self.cgroup.usage()
        peak = None if usage.peak_bytes is None else usage.peak_bytes // 1024
        return Totals(peak, usage.oom_kills, over, self._watch.grown_mb,
                      f"; in cgroup {self.cgroup.name}", usage.cpu_s)


def _make_cgroup(status: IsolationStatus, limits: Limits) -> JobCgroup:
    try:
        return JobCgroup.create(status.cgroups, limits)
    except CgroupError as err:
        raise ApplicationError(
            f"{err}; the sandbox promises each job a cgroup here ({status.cgroups.summary}). "
            "Check the cgroup hierarchy (`assay check`) or restart the sandbox worker",
            type=ErrorType.SANDBOX_UNAVAILABLE) from err
