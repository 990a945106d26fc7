"""Evidence verification: a result counts only when its evidence is on disk and checks hold.

Runs on the sandbox pool because it reads the working directories the sandbox wrote, and
reads nothing else: an artifact's recorded path is trusted only when it lies literally below
this worker's work directory, and it is opened without following links on the way, so a
request cannot make the (root) worker say whether some other file exists or what it holds.
"""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path
from typing import Any

from activities.artifacts.store import (
    NotStoredError,
    UnsafeEntryError,
    open_beneath,
    parts_below,
)
from activities.common.digests import drain
from activities.reports.numbers import value
from workflows.catalogue import VERIFY_EVIDENCE
from workflows.contracts.execution import Artifact, CheckResult, Verification, VerifyEvidenceInput
from workflows.contracts.plan import Check


def evaluate_check(check: Check, metrics: dict[str, Any]) -> CheckResult:
    """Evaluate one ``checks`` entry against the job's metrics."""
    if check.metric not in metrics:
        return CheckResult(check=check, passed=False, reason=f"metric {check.metric!r} missing")
    actual = metrics[check.metric]
    if not isinstance(actual, str | int | float | bool) or (
        isinstance(actual, float) and math.isnan(actual)
    ):
        return CheckResult(check=check, passed=False,
                           reason=f"metric {check.metric!r} is {actual!r}, not a comparable value")
    try:
        passed = check.holds(actual)
    except TypeError:
        return CheckResult(check=check, passed=False, actual=actual,
                           reason=f"cannot compare {actual!r} {check.op} {check.value!r}")
    reason = "" if passed else (f"{check.metric} = {value(actual)}, expected {check.op} "
                                f"{value(check.value)}")
    return CheckResult(check=check, passed=passed, actual=actual, reason=reason)


def _verify_artifacts(req: VerifyEvidenceInput,
                      work_dir: Path) -> tuple[list[Artifact], list[str]]:
    """Re-read every artifact the sandbox reported; list expected ones that are missing."""
    by_name = {a.name: a for a in req.outcome.artifacts}
    verified: list[Artifact] = []
    missing: list[str] = []
    for name in req.job.expected_artifacts:
        found = by_name.get(name)
        if found is None:
            missing.append(f"artifact {name!r} was not produced")
        elif problem := _artifact_problem(found, work_dir):
            missing.append(problem)
        else:
            verified.append(found)
    return verified, missing


def _artifact_problem(artifact: Artifact, work_dir: Path) -> str:
    """Why ``artifact`` does not count as evidence (empty: it does)."""
    name = artifact.name
    parts = parts_below(work_dir, artifact.path)
    if parts is None:
        return (f"artifact {name!r} is recorded at {artifact.path}, outside this worker's work "
                "directory; it was not read")
    try:
        fd = open_beneath(work_dir, parts)
    except NotStoredError:
        return f"artifact {name!r} is gone from {artifact.path}"
    except UnsafeEntryError as err:
        return f"artifact {name!r} at {artifact.path} is refused ({err})"
    except OSError as err:
        return f"artifact {name!r} cannot be read at {artifact.path} ({err.strerror})"
    with os.fdopen(fd, "rb") as handle:
        size, digest = drain(handle)
    if size == 0:
        return f"artifact {name!r} is empty"
    if digest != artifact.sha256:
        return f"artifact {name!r} changed after the job ended (checksum mismatch)"
    return ""


class EvidenceVerifier:
    """The ``verify_evidence`` activity of one sandbox worker, reading only below its work dir.

    Args:
        work_dir: where this worker's sandbox writes working directories.
    """

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir.expanduser().resolve()

    @VERIFY_EVIDENCE.defn
    async def verify_evidence(self, req: VerifyEvidenceInput) -> Verification:
        """Check artifacts (exist, non-empty, checksum unchanged), declared metrics and checks.

        Hashing runs in a thread so large artifacts never block the sandbox worker's event
        loop (and with it the heartbeats of jobs running beside this check).
        """
        return await asyncio.to_thread(verify, req, self.work_dir)


def verify(req: VerifyEvidenceInput, work_dir: Path) -> Verification:
    """The verification itself (blocking: it re-reads every artifact below ``work_dir``)."""
    artifacts, missing = _verify_artifacts(req, work_dir)
    metrics = req.outcome.metrics
    if req.outcome.metrics_error:
        missing.append(f"metrics.json unusable: {req.outcome.metrics_error}")
    missing.extend(
        f"metric {name!r} missing from metrics.json"
        for name in req.job.expected_metrics
        if name not in metrics
    )
    results = [evaluate_check(check, metrics) for check in req.checks]
    missing.extend(f"check failed: {r.check.describe()} ({r.reason})" for r in results
                   if not r.passed)
    passed = not missing
    summary = ("all evidence verified" if passed else "; ".join(missing))
    return Verification(passed=passed, missing=missing, checks=results, artifacts=artifacts,
                        summary=summary)
