"""Start one job's process, watch it, and make sure nothing of it survives.

The job runs in its own session (process group). Its exit is noticed through a pidfd, so the
worker reacts at once instead of polling. While it runs, a tick callback (heartbeat, disk
check) fires every ``tick_s``, and each tick samples the peak resident memory of the job's
processes, found by walking down from its first process (:func:`descendants`). However the
run ends (exit, timeout, cancellation), every process of the job is killed before
:func:`run_job` returns or raises.

CPU time (user + system) is counted for this job alone, never from the worker's
``RUSAGE_CHILDREN``, which mixes every job its threads run at once: ``wait4`` on the job's
first process gives its own time and that of every descendant it waited for. Under
bubblewrap that is not enough: bubblewrap's monitor exits without reaping the pid namespace's
init, whose count holds the job's. So each tick also sums the CPU clocks of the job's live
processes (each one's own time and its waited-for children's), and the larger figure is kept;
its last stretch (up to a tick) is lost. Where the job has a cgroup, its count is exact and
preferred (see :mod:`activities.sandbox.outcome`).

Peak memory is the largest resident size of any one process of the job. The kernel's
``ru_maxrss`` of the reaped child cannot be used alone: the child is a copy of the worker until
its first ``exec``, so it never reads lower than the worker's own size. Below that floor the
samples taken while the job ran are all there is (a job ending within 50 ms may report 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from activities.sandbox.descendants import descendants
from activities.sandbox.output import BoundedCapture, capture

_PIPE_DRAIN_S = 2.0
_FIRST_TICK_S = 0.05


@dataclass(frozen=True)
class Spawn:
    """How to start a job: command, environment, directory and who it runs as."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    uid: int | None
    setpriv: str
    kill: str | None
    output_limit: int
    pid_namespace: bool
    pass_fds: tuple[int, ...] = ()


@dataclass(frozen=True)
class Finished:
    """What the operating system reported about a finished job."""

    status: int
    peak_rss_kb: int
    duration_s: float
    cpu_s: float
    stdout: BoundedCapture
    stderr: BoundedCapture
    stopped_for: str | None


Tick = Callable[[float, BoundedCapture, BoundedCapture], str | None]
"""Called every tick with (elapsed seconds, stdout, stderr); a returned word stops the job."""


class _Child:
    """A started job process whose exit is announced through a pidfd (no polling)."""

    def __init__(self, spawn: Spawn) -> None:
        self.proc = subprocess.Popen(spawn.argv, cwd=spawn.cwd, env=spawn.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True,
                                     pass_fds=spawn.pass_fds)
        self.pid = self.proc.pid
        self._loop = asyncio.get_running_loop()
        self._pidfd = os.pidfd_open(self.pid)
        self.exited: asyncio.Future[None] = self._loop.create_future()
        self._loop.add_reader(self._pidfd, self._on_exit)
        self.streams: list[BoundedCapture] = []

    def _on_exit(self) -> None:
        self._loop.remove_reader(self._pidfd)  # a pidfd stays readable: stop being called
        if not self.exited.done():
            self.exited.set_result(None)

    async def capture(self, limit: int) -> None:
        """Start reading stdout and stderr."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.streams.append(await capture(self.proc.stdout, limit))
        self.streams.append(await capture(self.proc.stderr, limit))

    def close(self) -> None:
        """Stop watching the pid (the process itself is handled by the caller)."""
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)

    async def abandon(self, spawn: Spawn) -> None:
        """Kill everything, reap if possible and close the pipes (cancellation, errors)."""
        _kill_all(self.pid, spawn)
        await asyncio.wait([self.exited], timeout=10)
        if self.exited.done():
            _reap(self.proc)
        for stream in self.streams:
            stream.close()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


async def run_job(spawn: Spawn, *, timeout_s: float, tick_s: float, on_tick: Tick) -> Finished:
    """Run the job to its end; kill it on timeout, on request of ``on_tick`` or on cancel."""
    floor_kb = _high_water_kb("self")
    started = time.perf_counter()
    child = _Child(spawn)
    samples = _Samples()

    def tick(elapsed: float) -> str | None:
        samples.take(child.pid)
        return on_tick(elapsed, child.streams[0], child.streams[1])

    try:
        await child.capture(spawn.output_limit)
        stopped_for = await _watch(child.exited, started, timeout_s, tick_s, tick)
        if stopped_for is not None:
            _kill_all(child.pid, spawn)
            await child.exited
    except BaseException:
        # Cancelled (heartbeat timeout, worker shutdown) or broken: leave nothing running.
        await child.abandon(spawn)
        raise
    finally:
        child.close()
    duration = time.perf_counter() - started
    if stopped_for is None and not spawn.pid_namespace:
        # Stragglers may outlive the job. (In a pid namespace the kernel has already killed
        # them: its init exits last.) The leader is a zombie until reaped, so its process-group
        # id cannot have been reused yet.
        _kill_all(child.pid, spawn)
    status, max_rss, cpu_s = _reap(child.proc)
    out, err = child.streams
    await _drain(out, err)
    # ru_maxrss also counts the worker's own pages, which the job's first process carried
    # until its exec; below that floor only the samples taken while it ran say anything.
    peak = max(samples.peak_kb, max_rss if max_rss > floor_kb else 0)
    return Finished(status, peak, duration, max(cpu_s, samples.cpu_s), out, err, stopped_for)


async def _watch(exited: asyncio.Future[None], started: float, timeout_s: float,
                 tick_s: float, tick: Callable[[float], str | None]) -> str | None:
    """Wait for the exit; ``timeout`` or what ``tick`` returned if the job must be stopped.

    Ticks come quickly at first (50 ms, doubling up to ``tick_s``) so that the memory samples
    taken on each tick see short jobs too.
    """
    interval = min(_FIRST_TICK_S, tick_s)
    while not exited.done():
        remaining = timeout_s - (time.perf_counter() - started)
        if remaining <= 0:
            return "timeout"
        await asyncio.wait([exited], timeout=min(interval, remaining))
        interval = min(interval * 2, tick_s)
        if not exited.done() and (word := tick(time.perf_counter() - started)):
            return word
    return None


def _high_water_kb(pid: int | str) -> int:
    """Peak resident memory (VmHWM, KiB) of one live process's current program."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class _Samples:
    """The largest figures seen on the job's live processes while it ran."""

    peak_kb: int = 0
    cpu_s: float = 0.0

    def take(self, pid: int) -> None:
        """Sample the job's processes: the largest VmHWM, and their CPU clocks summed."""
        try:
            first = psutil.Process(pid)
            found = descendants(pid)
            procs = (first.children(recursive=True) if found is None
                     else [p for p in map(_process, found) if p is not None])
        except psutil.Error:
            return
        # The first process is the worker's copy until its exec: its memory says nothing.
        self.peak_kb = max([self.peak_kb, *(_high_water_kb(p.pid) for p in procs)])
        self.cpu_s = max(self.cpu_s, sum(_cpu_s(p) for p in (first, *procs)))


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:  # it ended meanwhile
        return None


def _cpu_s(process: psutil.Process) -> float:
    """A process's own CPU seconds and those of the children it waited for (0 once gone)."""
    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system + times.children_user + times.children_system


def _reap(proc: subprocess.Popen[bytes]) -> tuple[int, int, float]:
    """Wait status, ``ru_maxrss`` (KiB) and CPU seconds of the child and its reaped descendants.

    The kernel fills ``wait4``'s usage with the child's own times plus those of every
    descendant that was waited for (directly or by a reaper below it), for this child only.
    """
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # tells Popen it was reaped
    return status, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def _kill_all(pid: int, spawn: Spawn) -> None:
    """SIGKILL the job's process group and, with a dedicated uid, every process of that uid."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if spawn.uid is not None:
        sweep_uid(spawn.uid, setpriv=spawn.setpriv, kill=spawn.kill)


def sweep_uid(uid: int, *, setpriv: str, kill: str | None) -> None:
    """Kill every process of ``uid``, including ones that left the job's session.

    ``kill -1`` sent as that uid reaches all of its processes in one system call, during which
    no new process can be forked, so even a fork bomb cannot outrun it.
    """
    if kill is not None:
        subprocess.run([setpriv, "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                        "--", kill, "-KILL", "-1"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        return
    for _ in range(50):  # no procps: signal processes one by one until none is left
        victims = [p for p in psutil.process_iter(["uids"])
                   if p.info["uids"] is not None and p.info["uids"].real == uid]
        if not victims:
            return
        for victim in victims:
            with contextlib.suppress(psutil.Error):
                victim.kill()


async def _drain(out: BoundedCapture, err: BoundedCapture) -> None:
    """Read what is left in the pipes; stop waiting if something still holds them open."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(out.closed, err.closed), timeout=_PIPE_DRAIN_S)
    out.close()
    err.close()
