"""How much the sandbox adds to starting a job (the target: at most 50 ms over bare Python).

Runs ``pass`` through :meth:`Sandbox.execute_job` and as a bare ``python -c pass`` subprocess,
interleaved so both see the same machine load, and compares the medians.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from activities.sandbox.job import Sandbox
from workflows.contracts.execution import ExecuteJobInput
from workflows.contracts.plan import JobSpec


async def measure_start_overhead(n: int = 20, *, isolation: str = "auto",
                                 python: str = sys.executable) -> dict[str, float]:
    """Median wall time of a sandboxed and of a bare ``pass`` job, in milliseconds.

    Args:
        n: runs of each kind (after one warm-up run of each).
        isolation: sandbox isolation mode to measure.
        python: interpreter for both kinds of run.

    Returns:
        ``bare_ms``, ``sandbox_ms``, ``overhead_ms`` (their difference) and ``runs``.
    """
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # reachable by a job's unprivileged uid in rlimits mode
        sandbox = Sandbox(work_dir=work, isolation=isolation, python=python)
        await _bare(python)
        await _sandboxed(sandbox, 0)
        bare: list[float] = []
        boxed: list[float] = []
        for index in range(1, n + 1):
            bare.append(await _bare(python))
            boxed.append(await _sandboxed(sandbox, index))
    bare_ms = statistics.median(bare) * 1000
    sandbox_ms = statistics.median(boxed) * 1000
    return {"bare_ms": round(bare_ms, 2), "sandbox_ms": round(sandbox_ms, 2),
            "overhead_ms": round(sandbox_ms - bare_ms, 2), "runs": float(n)}


async def _bare(python: str) -> float:
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(python, "-c", "pass")
    await proc.wait()
    return time.perf_counter() - started


async def _sandboxed(sandbox: Sandbox, index: int) -> float:
    job = JobSpec(code="pass", source="pass", filename="job.py")
    req = ExecuteJobInput(run_id="bench", task_id="pass", attempt=index + 1, job=job)
    started = time.perf_counter()
    outcome = await sandbox.execute_job(req)
    elapsed = time.perf_counter() - started
    if outcome.outcome != "succeeded":
        raise RuntimeError(f"the benchmark job failed: {outcome.reason}")
    return elapsed
