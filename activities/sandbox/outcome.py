"""What a finished job amounts to, and the environment variables a job starts with.

:func:`job_outcome` reads the job's metrics, classifies how it ended (:mod:`.classify`) and
assembles the :class:`~workflows.contracts.execution.ExecutionOutcome` with its telemetry and
isolation; :func:`job_environ` is everything a job finds in its environment (nothing of the
worker's). Split from :mod:`activities.sandbox.job`, which runs the job.
"""

from __future__ import annotations

import os

from activities.sandbox.classify import Ending, classify, decode_status
from activities.sandbox.guards import Totals
from activities.sandbox.isolation import IsolationStatus
from activities.sandbox.jobjson import read_json_object
from activities.sandbox.limits import Limits
from activities.sandbox.process import Finished
from activities.sandbox.workspace import Layout
from workflows.contracts.execution import Artifact, ExecutionOutcome

MAX_METRICS_BYTES = 256 * 1024
"""The largest ``metrics.json`` a job may write."""


def job_outcome(layout: Layout, limits: Limits, finished: Finished, totals: Totals, *,
                status: IsolationStatus, uid: int | None, artifacts: list[Artifact],
                notes: list[str]) -> ExecutionOutcome:
    """How the job ended, with its metrics, artifacts, telemetry and isolation."""
    metrics, metrics_error = read_json_object(layout.path / "metrics.json", MAX_METRICS_BYTES)
    exit_code, signal = decode_status(finished.status, via_bwrap=status.mode == "bwrap")
    stopped_for = finished.stopped_for or totals.over_quota
    ending = Ending(exit_code, signal, stopped_for, finished.stderr.text(), totals.oom_kills)
    kind, reason = classify(ending, limits=limits, workspace=str(layout.path),
                            network_isolated=status.network_isolated)
    notes = [*_usage_notes(kind, totals), *notes]
    if notes:
        reason += "; also: " + "; ".join(notes)
    who = f"uid {uid}" if uid is not None else f"uid {os.geteuid()}"
    peak_kb = finished.peak_rss_kb if totals.peak_memory_kb is None else totals.peak_memory_kb
    # The cgroup also counts processes that outlived the job's first one; wait4 cannot.
    cpu_s = finished.cpu_s if totals.cpu_s is None else totals.cpu_s
    return ExecutionOutcome(
        outcome=kind, reason=reason, exit_code=exit_code, signal=signal,
        duration_s=round(finished.duration_s, 3), cpu_s=round(cpu_s, 3),
        peak_memory_mb=round(peak_kb / 1024, 1),
        stdout_tail=finished.stdout.text(), stderr_tail=ending.stderr,
        stdout_bytes=finished.stdout.total, stderr_bytes=finished.stderr.total,
        output_truncated=finished.stdout.truncated or finished.stderr.truncated,
        workspace=str(layout.path),
        isolation=f"{status.summary}; as {who}; limits: {limits.describe()}{totals.cgroup}",
        artifacts=artifacts, metrics=metrics, metrics_error=metrics_error)


def job_environ(layout: Layout, tmpdir: str, limits: Limits, python: str) -> dict[str, str]:
    """The job's whole environment: nothing of the worker's is passed on."""
    threads = str(limits.threads_hint)
    bindir = os.path.dirname(python)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(layout.home), "TMPDIR": tmpdir,
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "USER": "assay-job", "LOGNAME": "assay-job",
        "ASSAY_JOB_ARGS": str(layout.args_file),
        "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
    }


def _usage_notes(kind: str, totals: Totals) -> list[str]:
    """What the job used as a whole that its outcome does not already say."""
    notes: list[str] = []
    if totals.oom_kills and kind != "out_of_memory":
        notes.append(f"the kernel killed {totals.oom_kills} of its processes for memory")
    if totals.over_quota == "disk_quota":
        notes.append(f"its working directory grew by {totals.disk_grown_mb:g} MiB")
    return notes
