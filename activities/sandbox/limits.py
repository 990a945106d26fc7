"""Resource limits of one sandboxed job, and how they are applied.

The limits come from the job's ``resources`` capped by the worker's ceilings, so a plan can ask
for less than the worker allows but never more. They are applied with util-linux ``prlimit``
right before the interpreter starts (inside the sandbox), never from Python code running
between ``fork`` and ``exec`` of a multi-threaded worker. Where the job has a cgroup (see
:mod:`activities.sandbox.cgroup`), memory, processes and CPU are also bounded for the whole job;
the per-process limits stay as a second line of defence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workflows.contracts.plan import Resources

_MIB = 1 << 20
CPU_GRACE_S = 5
"""Seconds between SIGXCPU (soft CPU limit) and SIGKILL (hard CPU limit)."""


@dataclass(frozen=True)
class Limits:
    """What one job may use.

    Attributes:
        memory_mb: address-space limit (RLIMIT_AS) of every process of the job, and the
            memory limit of the job's cgroup (all its processes together).
        timeout_s: wall-clock limit of the whole job; the sandbox kills it afterwards.
        cpu_s: CPU-time limit (RLIMIT_CPU) of every process, a backstop behind ``timeout_s``.
        processes: processes and threads the job may have at once (RLIMIT_NPROC, and
            ``pids.max`` of its cgroup).
        open_files: open file descriptors per process (RLIMIT_NOFILE).
        file_size_mb: largest file the job may write (RLIMIT_FSIZE).
        threads_hint: value for OMP/BLAS thread-count variables (from ``resources.cpus``).
        disk_reserve_mb: free space on the work disk below which the job is stopped.
        cpus: CPU quota of the job's cgroup (``resources.cpus``), where there is one.
        disk_mb: how much the working directory may grow while the job runs (0: no quota).
        files: how many files, directories and links it may gain (0: no quota).
        artifact_mb: the largest artifact stored, by apparent size (as it reads back).
        artifacts_mb: all of the job's stored artifacts together, by apparent size.
    """

    memory_mb: int
    timeout_s: float
    cpu_s: int
    processes: int
    open_files: int
    file_size_mb: int
    threads_hint: int
    disk_reserve_mb: int = 0
    cpus: float = 1.0
    disk_mb: int = 0
    files: int = 0
    artifact_mb: int = 1024
    artifacts_mb: int = 4096

    @classmethod
    def for_job(cls, resources: Resources, *, max_memory_mb: int, max_timeout_s: float,
                processes: int, open_files: int, file_size_mb: int,
                disk_reserve_mb: int = 0, disk_mb: int = 0, files: int = 0,
                artifact_mb: int = 1024, artifacts_mb: int = 4096) -> Limits:
        """The job's requested resources, capped by the worker's ceilings.

        What a job's artifacts may weigh together is also capped by its disk quota: a job
        stores no more than it was allowed to write (sparse files would, read back).
        """
        timeout_s = min(resources.timeout_s, max_timeout_s)
        cpus = max(1.0, resources.cpus)
        return cls(
            memory_mb=min(resources.memory_mb, max_memory_mb),
            timeout_s=timeout_s,
            # A job may keep every CPU it asked for busy for its whole wall-clock budget.
            cpu_s=math.ceil(timeout_s * cpus) + 1,
            processes=processes,
            open_files=open_files,
            file_size_mb=file_size_mb,
            threads_hint=max(1, math.ceil(resources.cpus)),
            disk_reserve_mb=disk_reserve_mb,
            cpus=resources.cpus,
            disk_mb=disk_mb,
            files=files,
            artifact_mb=artifact_mb,
            artifacts_mb=min(artifacts_mb, disk_mb) if disk_mb else artifacts_mb,
        )

    def prlimit_args(self, prlimit: str, *, nproc_offset: int = 0) -> list[str]:
        """Command prefix that sets every limit and then runs the job.

        Args:
            prlimit: path of the ``prlimit`` binary.
            nproc_offset: processes the job's uid already has (RLIMIT_NPROC counts every
                process of a uid, so a job sharing the worker's uid needs that headroom).
        """
        memory = self.memory_mb * _MIB
        return [
            prlimit,
            f"--as={memory}",
            f"--cpu={self.cpu_s}:{self.cpu_s + CPU_GRACE_S}",
            f"--nproc={self.processes + nproc_offset}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_size_mb * _MIB}",
            "--core=0",
            "--",
        ]

    def describe(self) -> str:
        """One line for the execution record, e.g. ``memory 256 MiB, timeout 3 s, ...``."""
        quota = f"working directory up to {self.disk_mb} MiB, " if self.disk_mb else ""
        quota += f"{self.files} new files, " if self.files else ""
        return (f"memory {self.memory_mb} MiB, timeout {self.timeout_s:g} s, "
                f"cpu {self.cpu_s} s/process, {self.processes} processes, "
                f"{self.open_files} open files, files up to {self.file_size_mb} MiB, "
                f"{quota}{self.disk_reserve_mb} MiB kept free on disk")
