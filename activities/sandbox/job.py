"""The ``execute_job`` activity: run a task's Python job in a sandbox and report what happened.

Job conventions (the contract between Assay and the code a plan runs):

- **Working directory.** Each attempt gets a fresh ``<run>/<task>/attempt-<n>-<execution>/``
  (:mod:`activities.sandbox.workspace`; one left by a crashed worker is wiped). The job's source is
  written there as ``job.filename`` and run with the worker's Python (or that of the job's
  provisioned environment: :mod:`activities.sandbox.interpreter`), with that directory as
  its current directory, in its own session and process group.
- **Inputs** appear read-only under their names in the working directory, copied from the
  artifact store by the sha256 pinned when the plan was submitted (never from a path in the
  request: see :mod:`activities.sandbox.sources`). **Dependency artifacts** appear read-only
  under ``deps/<task_id>/<name>``, fetched from the store by their sha256 too.
- **Arguments** arrive as ``--key=value`` flags (booleans as ``true``/``false``) and as a JSON
  object in the file named by ``$ASSAY_JOB_ARGS``.
- **Metrics**: write a JSON object to ``metrics.json`` in the working directory (at most
  256 KiB). **Artifacts** are all regular files the job leaves in its working directory (except
  the job file, inputs, ``deps/`` and ``.assay/``), listed with size and sha256. Symbolic links
  are not followed and not listed.
- **Environment**: nothing of the worker's environment is passed on. The job gets ``PATH``,
  ``HOME`` (``.assay/home``, so tool caches do not pose as artifacts), ``TMPDIR``, ``LANG``/
  ``LC_ALL`` (C.UTF-8), ``PYTHONUNBUFFERED=1``, ``PYTHONDONTWRITEBYTECODE=1``, ``USER``/
  ``LOGNAME`` (``assay-job``), ``ASSAY_JOB_ARGS`` and OMP/OpenBLAS/MKL thread counts matching
  ``resources.cpus``.
- **Limits**: ``resources.memory_mb`` and wall clock ``resources.timeout_s`` (both capped by
  the worker); where the job gets a cgroup (see :mod:`activities.sandbox.cgroup`), memory for
  all its processes together, processes and threads, and ``resources.cpus`` as a CPU quota;
  per process, address space, CPU time, processes and threads, open files, file size. The
  working directory may grow by at most ``max_disk_mb`` (see :mod:`activities.sandbox.quota`),
  and the sandbox stops a job that drives the disk below a free-space reserve.
- **Isolation** (see :mod:`activities.sandbox.isolation`): with bubblewrap, no network, no user
  namespaces, a read-only view of the system and the interpreter, and only the working
  directory (plus a private ``/tmp`` and ``/dev/shm`` inside it) writable. A root worker runs
  every job as its own unprivileged uid.
- **Telemetry**: duration, exit status or signal, peak memory (of the job's cgroup, all
  processes together; without a cgroup, of its largest process, see
  :mod:`activities.sandbox.process`), CPU time of the job's processes (of its cgroup; without
  one, from the job's own process tree, never another job's), and at most
  ``output_limit_bytes`` each of stdout and stderr (a quarter from the start, the rest from
  the end) with their total sizes.

Every way a job can end is an
:class:`~workflows.contracts.execution.ExecutionOutcome`, never an activity failure; only a
wrong request (no source, unsafe names, changed inputs, types ``InvalidJob`` and
``InputChanged``) or a worker that cannot run jobs (``DiskFull``, ``SandboxUnavailable``) fails
the activity.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
from temporalio.exceptions import ApplicationError

from activities.artifacts.store import ArtifactStore, LocalArtifactStore
from activities.common.heartbeat import Heartbeats, beat
from activities.common.trees import TreeLimitError, remove_tree
from activities.environments import Environments
from activities.metrics import record
from activities.sandbox.artifacts import (
    ArtifactsTooLargeError,
    collect_artifacts,
    store_artifacts,
)
from activities.sandbox.cgroup import sweep_stale
from activities.sandbox.classify import KEEPS_NOTHING
from activities.sandbox.command import Tools, build_argv, uid_pool
from activities.sandbox.guards import JobGuards, Totals
from activities.sandbox.hierarchy import CgroupSupport
from activities.sandbox.interpreter import job_tools
from activities.sandbox.isolation import IsolationStatus, isolation_status, require
from activities.sandbox.limits import Limits
from activities.sandbox.outcome import MAX_METRICS_BYTES, job_environ, job_outcome
from activities.sandbox.output import BoundedCapture
from activities.sandbox.process import Finished, Spawn, run_job
from activities.sandbox.quota import disk_usage, lowest, refuse_when_full
from activities.sandbox.sources import Sources
from activities.sandbox.workspace import (
    Layout,
    hand_back,
    plan_layout,
    prepare,
    task_execution,
    unreachable_parent,
)
from workflows.catalogue import EXECUTE_JOB
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import Artifact, ExecuteJobInput, ExecutionOutcome
from workflows.contracts.plan import Scalar

__all__ = ["MAX_METRICS_BYTES", "IsolationStatus", "Sandbox", "isolation_status"]



class Sandbox:
    """Runs jobs for the sandbox worker pool; one instance per worker, built from settings.

    Args:
        work_dir: where working directories are created.
        output_limit_bytes: bytes of stdout and of stderr kept per job (head and tail).
        max_memory_mb: ceiling on any job's ``resources.memory_mb``.
        max_timeout_s: ceiling on any job's ``resources.timeout_s``.
        isolation: ``auto``, ``bwrap`` or ``rlimits`` (see :func:`isolation_status`).
        python: interpreter jobs run with.
        heartbeat_every_s: heartbeat (and disk check) interval while a job runs.
        max_processes: processes and threads one job may have at once.
        max_open_files: open files per process of a job.
        max_file_size_mb: largest file a job may write.
        min_free_disk_mb: free space a job may not push the work disk below.
        max_disk_mb: how much one job's working directory may grow (0: no quota).
        max_files: how many files and directories one job may create (0: no quota).
        max_artifact_mb: the largest artifact stored, by apparent size.
        max_artifacts_mb: one job's artifacts together, by apparent size (at most its
            ``max_disk_mb``).
        bwrap: bubblewrap binary (default: found on ``PATH``).
        fingerprint: names the job environment (asked while the job runs, so it costs no
            time); stamped on every outcome for reflection.
        store: the artifact store inputs and dependency artifacts are fetched from and
            artifacts are put in (none: inputs are refused, artifacts kept only here).
        cgroups: where jobs' cgroups go, instead of what is measured on this machine
            (:meth:`CgroupSupport.unavailable` runs jobs without one).
        environments: provisioned job environments (none: every job runs in ``python``).

    Raises:
        SandboxUnavailableError: the requested isolation cannot run jobs on this machine.
    """

    def __init__(self, *, work_dir: Path, output_limit_bytes: int = 64_000,
                 max_memory_mb: int = 8192, max_timeout_s: float = 21600,
                 isolation: str = "auto", python: str = sys.executable,
                 heartbeat_every_s: float = 1.0, max_processes: int = 256,
                 max_open_files: int = 1024, max_file_size_mb: int = 1024,
                 min_free_disk_mb: int = 512, max_disk_mb: int = 4096,
                 max_files: int = 10_000, max_artifact_mb: int = 1024,
                 max_artifacts_mb: int = 4096,
                 bwrap: str | None = None,
                 fingerprint: Callable[[], Awaitable[str]] | None = None,
                 cgroups: CgroupSupport | None = None,
                 store: ArtifactStore | None = None,
                 environments: Environments | None = None) -> None:
        status = require(isolation, python=python, bwrap=bwrap)
        self.status = status if cgroups is None else dataclasses.replace(status, cgroups=cgroups)
        sweep_stale(self.status.cgroups)
        self._work_dir = work_dir.expanduser().resolve()
        self._output_limit = output_limit_bytes
        self._max_memory_mb = max_memory_mb
        self._max_timeout_s = max_timeout_s
        # Resolve the directory but keep the file name: a venv's python is a symlink whose
        # own path is what tells the interpreter which venv it belongs to.
        self._python = os.path.join(os.path.realpath(os.path.dirname(python)),
                                    os.path.basename(python))
        self._heartbeat_every_s = heartbeat_every_s
        self._max_processes = max_processes
        self._max_open_files = max_open_files
        self._max_file_size_mb = max_file_size_mb
        self._min_free_disk_mb = min_free_disk_mb
        self._max_disk_mb = max_disk_mb
        self._max_files = max_files
        self._max_artifact_mb = max_artifact_mb
        self._max_artifacts_mb = max_artifacts_mb
        self._beats = Heartbeats(heartbeat_every_s)
        self._in_thread = self._beats.in_thread
        self._fingerprint = fingerprint
        self._sources = Sources(self._work_dir, store)
        self._store = store
        self._environments = environments
        self._disks = [("the work directory", self._work_dir)]
        if isinstance(store, LocalArtifactStore):
            self._disks.append(("the artifact store", store.root))

    @EXECUTE_JOB.defn
    async def execute_job(self, req: ExecuteJobInput) -> ExecutionOutcome:
        """Run one attempt of a task's job and classify how it ended."""
        layout = plan_layout(self._work_dir, req, task_execution())  # its own per execution
        self._sources.check(req)
        limits = Limits.for_job(req.job.resources, max_memory_mb=self._max_memory_mb,
                                max_timeout_s=self._max_timeout_s,
                                processes=self._max_processes,
                                open_files=self._max_open_files,
                                file_size_mb=self._max_file_size_mb,
                                disk_reserve_mb=self._min_free_disk_mb,
                                disk_mb=self._max_disk_mb, files=self._max_files,
                                artifact_mb=self._max_artifact_mb,
                                artifacts_mb=self._max_artifacts_mb)
        self._check_work_dir()
        tools = await self._job_tools(req)
        environment = asyncio.ensure_future(self._fingerprint() if self._fingerprint
                                            else _no_fingerprint())
        try:
            with uid_pool.lease() as uid:
                await self._in_thread(prepare, layout, req, uid, self._sources)
                finished, totals = await self._run(layout, req, limits, uid, tools)
                outcome = await self._outcome(layout, limits, finished, totals, uid)
            outcome.environment = await environment
            if req.environment is not None and req.environment.provisioned:
                outcome.environment = req.environment.label()
        finally:
            environment.cancel()
        record.job_ran(outcome)
        return outcome

    async def _job_tools(self, req: ExecuteJobInput) -> Tools:
        """The sandbox's tools with the job's interpreter: its environment's, if it has one."""
        return await job_tools(dataclasses.replace(self.status.tools, python=self._python),
                               req.environment, self._environments,
                               heartbeat_every_s=self._heartbeat_every_s, heartbeat=beat)

    async def _run(self, layout: Layout, req: ExecuteJobInput, limits: Limits,
                   uid: int | None, tools: Tools) -> tuple[Finished, Totals]:
        mode = "bwrap" if self.status.mode == "bwrap" else "rlimits"
        job = [tools.python, layout.filename, *_flags(req.job.args)]
        # RLIMIT_NPROC counts every process of a uid; only a job sharing the worker's uid
        # outside a user namespace (rlimits mode, non-root worker) needs headroom for them.
        offset = _own_tasks() if uid is None and mode == "rlimits" else 0
        baseline = await self._in_thread(disk_usage, layout.path)
        guards = JobGuards(self.status, layout.path, limits, baseline).__enter__()
        try:
            argv, tmpdir = build_argv(mode, tools, workspace=layout.path, uid=uid,
                                      limits=limits, job=job, nproc_offset=offset,
                                      seccomp_fd=guards.seccomp_fd)
            spawn = Spawn(argv=guards.command(argv),
                          env=job_environ(layout, tmpdir, limits, tools.python),
                          cwd=layout.path, uid=uid, setpriv=self.status.tools.setpriv,
                          kill=self.status.tools.kill, output_limit=self._output_limit,
                          pid_namespace=self.status.pid_namespace, pass_fds=guards.pass_fds)
            finished = await run_job(spawn, timeout_s=limits.timeout_s,
                                     tick_s=self._heartbeat_every_s,
                                     on_tick=functools.partial(self._on_tick, guards))
            return finished, await self._in_thread(guards.totals)
        finally:
            # A cgroup whose killed processes still exit waits for them: not on the event loop.
            await asyncio.shield(asyncio.to_thread(guards.close))

    def _on_tick(self, guards: JobGuards, elapsed: float, out: BoundedCapture,
                 err: BoundedCapture) -> str | None:
        if lowest(self._disks)[2] < self._min_free_disk_mb:
            return "disk"
        if stop := guards.tick():
            return stop
        beat(phase="running", elapsed_s=round(elapsed, 1), stdout_bytes=out.total,
                   stderr_bytes=err.total, last_line=out.last_line())
        return None

    async def _outcome(self, layout: Layout, limits: Limits, finished: Finished, totals: Totals,
                       uid: int | None) -> ExecutionOutcome:
        """Hand the directory back, store the artifacts; keep nothing of a job over a quota."""
        stop = finished.stopped_for or totals.over_quota
        artifacts: list[Artifact] = []
        notes: list[str] = []
        if stop not in KEEPS_NOTHING:
            try:
                await self._in_thread(hand_back, layout, uid)
                artifacts, notes = await self._in_thread(collect_artifacts, layout, limits)
            except TreeLimitError as err:
                stop, notes = ("tree_depth" if err.kind == "depth" else "file_quota"), [str(err)]
            except ArtifactsTooLargeError as err:
                stop, notes = "artifacts_size", [str(err)]
        if stop in KEEPS_NOTHING:
            await self._in_thread(remove_tree, layout.path)
            artifacts, notes = [], [*notes, "nothing it wrote was kept (its working directory "
                                    "was removed and no artifact stored)"]
            totals = dataclasses.replace(totals, over_quota=totals.over_quota or stop)
        elif self._store is not None:
            await self._in_thread(store_artifacts, self._store, artifacts)
        return job_outcome(layout, limits, finished, totals, status=self.status, uid=uid,
                           artifacts=artifacts, notes=notes)

    def _check_work_dir(self) -> None:
        """Refuse to start when a disk is nearly full or the work directory unreachable."""
        self._work_dir.mkdir(parents=True, exist_ok=True)
        refuse_when_full(self._disks, self._min_free_disk_mb)
        blocked = (unreachable_parent(self._work_dir)
                   if self.status.mode == "rlimits" and self.status.dedicated_uid else None)
        if blocked is not None:
            raise ApplicationError(
                f"in rlimits isolation jobs run as an unprivileged uid, which cannot reach "
                f"{self._work_dir} because {blocked} is not searchable by other users; "
                f"`chmod o+x {blocked}`, move ASSAY_DATA_DIR, or install bubblewrap",
                type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True)


async def _no_fingerprint() -> str:
    return ""


def _flags(args: dict[str, Scalar]) -> list[str]:
    return [f"--{key}={json.dumps(value) if isinstance(value, bool) else value}"
            for key, value in args.items()]


def _own_tasks() -> int:
    """Processes and threads the worker's user already runs."""
    me = os.geteuid()
    return sum(p.info["num_threads"] or 1 for p in psutil.process_iter(["uids", "num_threads"])
               if p.info["uids"] is not None and p.info["uids"].real == me)
