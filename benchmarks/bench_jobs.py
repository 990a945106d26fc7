"""Job throughput: N real sandboxed jobs against the same N jobs as bare bubblewrap processes.

The job is small and real: it computes a sum, writes an artifact and a ``metrics.json``. Both
series run ``CONCURRENCY`` jobs at a time (the machine's cores: the physical limit), one
after the other on the same machine:

- bare: ``bwrap`` with the namespaces and read-only root a job gets, then ``python job.py``,
  spawned straight from this process (what the hardware allows);
- Assay: ``Sandbox.execute_job`` as the sandbox pool runs it (environment fingerprint,
  workspace, isolation, guards, artifacts into the store), then ``verify`` of its evidence;
- Assay without a job cgroup: the same, with the sandbox told the machine has none, which is
  what the cgroup (its memory, process and CPU limits, its exact CPU count and OOM kills)
  costs. A job keeps its namespaces, uid and rlimits either way.

Printed: jobs/s of each, the time to the first finished job, and where an Assay job's time
goes (its environment, preparation, the run under bwrap, collecting its outcome,
verification), with and without its cgroup, beside the costs of its parts measured alone:
``python -c pass`` bare and under bwrap, and ``true`` under bwrap; the worker's CPU per job
(this process's, its threads included), and a tick's look-up of a running job's processes
(``activities.sandbox.descendants``) against ``psutil``'s scan of every process.

Run: ``python -m benchmarks.bench_jobs``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypedDict

import psutil

from activities.artifacts.store import LocalArtifactStore
from activities.evidence.verify import verify
from activities.sandbox.descendants import descendants
from activities.sandbox.environment import EnvironmentProbe
from activities.sandbox.hierarchy import CgroupSupport
from activities.sandbox.job import Sandbox
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome, VerifyEvidenceInput
from workflows.contracts.plan import JobSpec

CONCURRENCY = os.cpu_count() or 1
SOURCE = """import json, math
total = sum(math.sqrt(i) for i in range(100_000))
open("out.txt", "w").write(f"{total}\\n")
json.dump({"total": total}, open("metrics.json", "w"))
"""
JOB = JobSpec(code=SOURCE, source=SOURCE, filename="job.py", expected_artifacts=["out.txt"],
              expected_metrics=["total"])


class Series(TypedDict):
    """One series: wall seconds, jobs/s, seconds to the first finished job, and this process's
    CPU seconds per job (its threads' too: the worker's share when the jobs are Assay's)."""

    jobs: int
    wall_s: float
    per_s: float
    first_s: float
    own_cpu_s: float


class Phases(dict[str, list[float]]):
    """Seconds of each phase of each Assay job."""

    def timed(self, name: str, call: Awaitable[Any]) -> Awaitable[Any]:
        """``call``, its seconds added to ``name``."""
        async def run() -> Any:
            start = time.perf_counter()
            try:
                return await call
            finally:
                self.setdefault(name, []).append(time.perf_counter() - start)
        return run()


class TimedSandbox(Sandbox):
    """The sandbox, with the seconds of its phases kept in ``phases``."""

    phases: Phases

    async def _job_tools(self, req: ExecuteJobInput) -> Any:
        return await self.phases.timed("environment", super()._job_tools(req))

    async def _run(self, *args: Any, **kwargs: Any) -> Any:
        return await self.phases.timed("run under bwrap", super()._run(*args, **kwargs))

    async def _outcome(self, *args: Any, **kwargs: Any) -> Any:
        return await self.phases.timed("outcome (artifacts)", super()._outcome(*args, **kwargs))


async def bounded(n: int, one: Callable[[int], Awaitable[None]]) -> Series:
    """Run ``one(0..n-1)``, ``CONCURRENCY`` at a time; wall, rate and first finish."""
    gate = asyncio.Semaphore(CONCURRENCY)
    finished: list[float] = []
    start, cpu = time.perf_counter(), time.process_time()

    async def job(index: int) -> None:
        async with gate:
            await one(index)
            finished.append(time.perf_counter() - start)

    await asyncio.gather(*(job(i) for i in range(n)))
    wall = time.perf_counter() - start
    return Series(jobs=n, wall_s=wall, per_s=n / wall, first_s=min(finished),
                  own_cpu_s=(time.process_time() - cpu) / n)


def bwrap_argv(work: Path, argv: list[str]) -> list[str]:
    """``argv`` under bubblewrap with a job's namespaces and a read-only root."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed: the job bench needs it")
    return [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(work),
            str(work), "--chdir", str(work), *argv]


async def spawned(argv: list[str], cwd: Path) -> None:
    """Run ``argv`` to its end.

    Raises:
        RuntimeError: it failed.
    """
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd)
    if await proc.wait() != 0:
        raise RuntimeError(f"{argv[-2:]} failed with code {proc.returncode}")


async def bare(root: Path, n: int) -> Series:
    """The N jobs as ``bwrap … python job.py``."""
    async def one(index: int) -> None:
        work = root / f"bare-{index}"
        work.mkdir()
        (work / "job.py").write_text(SOURCE)
        await spawned(bwrap_argv(work, [sys.executable, "job.py"]), work)
    return await bounded(n, one)


async def assay(root: Path, n: int, phases: Phases, *, cgroups: bool = True) -> Series:
    """The N jobs through the sandbox pool's activity, each then verified; ``cgroups=False``:
    the sandbox runs them with no cgroup of their own."""
    store = LocalArtifactStore(root / "store")
    probe = EnvironmentProbe()
    work = root / ("work" if cgroups else "work-without-cgroups")
    work.mkdir(mode=0o755)
    sandbox = TimedSandbox(work_dir=work, fingerprint=probe.fingerprint, store=store,
                           cgroups=None if cgroups else CgroupSupport.unavailable(
                               "left out to measure what a job's cgroup costs"))
    sandbox.phases = phases

    async def one(index: int) -> None:
        start = time.perf_counter()
        outcome: ExecutionOutcome = await sandbox.execute_job(ExecuteJobInput(
            run_id="bench-jobs", task_id=f"t{index}", attempt=1, job=JOB))
        phases.setdefault("job", []).append(time.perf_counter() - start)
        if outcome.outcome != "succeeded":
            raise RuntimeError(f"the benchmark job failed: {outcome.reason}")
        check = VerifyEvidenceInput(task_id=f"t{index}", job=JOB, outcome=outcome)
        verified = await phases.timed("verification", asyncio.to_thread(verify, check, store))
        if not verified.passed:
            raise RuntimeError(f"the benchmark job's evidence failed: {verified.summary}")
    await probe.fingerprint()  # the worker's probe is warm before its first job
    return await bounded(n, one)


async def parts(root: Path, runs: int = 10) -> dict[str, float]:
    """Median seconds of the parts alone, one at a time."""
    work = root / "parts"
    work.mkdir()
    (work / "job.py").write_text(SOURCE)
    argvs = {"python -c pass": [sys.executable, "-c", "pass"],
             "bwrap true": bwrap_argv(work, ["/bin/true"]),
             "bwrap python -c pass": bwrap_argv(work, [sys.executable, "-c", "pass"]),
             "python job.py": [sys.executable, "job.py"]}
    took: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(runs):
        for name, argv in argvs.items():
            start = time.perf_counter()
            await spawned(argv, work)
            took[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in took.items()}


def lookups(rounds: int = 200) -> tuple[float, float, int]:
    """Median seconds to find a running job's processes (a shell, two children and a
    grandchild) by walking down from it (``descendants``, what a tick does) and by ``psutil``'s
    scan of every process; and how many processes the machine runs."""
    tree = subprocess.Popen(["sh", "-c", "sleep 30 & sh -c 'sleep 30' & wait"])
    try:
        deadline = time.monotonic() + 10
        while len(psutil.Process(tree.pid).children(recursive=True)) < 3:
            if time.monotonic() > deadline:
                raise RuntimeError("the look-up's process tree did not start within 10 s")
            time.sleep(0.01)
        took: dict[str, list[float]] = {"walk": [], "psutil": []}
        for _ in range(rounds):
            for name, find in (("walk", lambda: descendants(tree.pid)),
                               ("psutil", lambda: psutil.Process(tree.pid).children(
                                   recursive=True))):
                start = time.perf_counter()
                find()
                took[name].append(time.perf_counter() - start)
        return (statistics.median(took["walk"]), statistics.median(took["psutil"]),
                len(psutil.pids()))
    finally:
        for child in psutil.Process(tree.pid).children(recursive=True):
            child.kill()
        tree.kill()
        tree.wait()


class Measured(TypedDict):
    """The series, the Assay jobs' phase medians (with and without cgroups), the parts."""

    limit: Series
    ours: Series
    uncontained: Series
    phases: dict[str, float]
    uncontained_phases: dict[str, float]
    alone: dict[str, float]


async def measure(n: int = 40) -> Measured:
    """The three series of ``n`` jobs, the Assay jobs' phase medians and the parts alone."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-jobs-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        alone = await parts(root)
        (root / "warm").mkdir()
        await bare(root / "warm", 1)
        limit = await bare(root, n)
        phases, without = Phases(), Phases()
        ours = await assay(root, n, phases)
        uncontained = await assay(root, n, without, cgroups=False)
    return Measured(limit=limit, ours=ours, uncontained=uncontained, phases=_medians(phases),
                    uncontained_phases=_medians(without), alone=alone)


def _medians(phases: Phases) -> dict[str, float]:
    medians = {k: statistics.median(v) for k, v in phases.items()}
    medians["preparation (workspace, limits)"] = medians["job"] - sum(
        medians[k] for k in ("environment", "run under bwrap", "outcome (artifacts)"))
    return medians


def run(n: int = 40) -> None:
    """Measure and print."""
    got = asyncio.run(measure(n))
    limit, ours, uncontained = got["limit"], got["ours"], got["uncontained"]
    print(f"   {n} jobs, {CONCURRENCY} at a time: bare bwrap + python {limit['per_s']:.1f} "
          f"jobs/s (first after {limit['first_s'] * 1000:.0f} ms); Assay's sandbox + "
          f"verification {ours['per_s']:.1f} jobs/s (first after {ours['first_s'] * 1000:.0f} "
          f"ms): {ours['per_s'] / limit['per_s']:.2f} of the limit")
    print(f"   the same without a cgroup per job (no memory, process or CPU limit of the "
          f"cgroup's, no exact CPU count or OOM kills): {uncontained['per_s']:.1f} jobs/s "
          f"(first after {uncontained['first_s'] * 1000:.0f} ms): "
          f"{uncontained['per_s'] / limit['per_s']:.2f} of the limit")
    for label, phases in (("an Assay job's time", got["phases"]),
                          ("  without its cgroup", got["uncontained_phases"])):
        print(f"   {label} (median ms): " + ", ".join(
            f"{name} {seconds * 1000:.0f}" for name, seconds in phases.items()))
    print("   the parts alone (median ms): " + ", ".join(
        f"{name} {seconds * 1000:.0f}" for name, seconds in got["alone"].items()))
    print(f"   the worker's CPU per job (its threads too): {ours['own_cpu_s'] * 1000:.1f} ms "
          f"with a cgroup, {uncontained['own_cpu_s'] * 1000:.1f} ms without; the bare series "
          f"spawning its bwrap: {limit['own_cpu_s'] * 1000:.1f} ms")
    walk, scan, processes = lookups()
    print(f"   a tick's look-up of a running job's 4 processes (median of 200): walking down "
          f"from it {walk * 1000:.2f} ms, psutil's scan of the machine's {processes} processes "
          f"{scan * 1000:.2f} ms")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
