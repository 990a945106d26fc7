"""Evidence verification: a result counts only when its evidence is on disk and checks hold.

Runs on the sandbox pool because it reads the working directories the sandbox wrote.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from activities.common.digests import file_sha256
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
    reason = "" if passed else f"{check.metric} = {actual!r}, expected {check.op} {check.value!r}"
    return CheckResult(check=check, passed=passed, actual=actual, reason=reason)


def _verify_artifacts(req: VerifyEvidenceInput) -> tuple[list[Artifact], list[str]]:
    """Re-read every artifact the sandbox reported; list expected ones that are missing."""
    by_name = {a.name: a for a in req.outcome.artifacts}
    verified: list[Artifact] = []
    missing: list[str] = []
    for name in req.job.expected_artifacts:
        found = by_name.get(name)
        if found is None:
            missing.append(f"artifact {name!r} was not produced")
            continue
        path = Path(found.path)
        if not path.is_file():
            missing.append(f"artifact {name!r} is gone from {path}")
        elif path.stat().st_size == 0:
            missing.append(f"artifact {name!r} is empty")
        elif file_sha256(path) != found.sha256:
            missing.append(f"artifact {name!r} changed after the job ended (checksum mismatch)")
        else:
            verified.append(found)
    return verified, missing


@VERIFY_EVIDENCE.defn
async def verify_evidence(req: VerifyEvidenceInput) -> Verification:
    """Check artifacts (exist, non-empty, checksum unchanged), declared metrics and checks.

    Hashing runs in a thread so large artifacts never block the sandbox worker's event loop
    (and with it the heartbeats of jobs running beside this check).
    """
    return await asyncio.to_thread(verify, req)


def verify(req: VerifyEvidenceInput) -> Verification:
    """The verification itself (blocking: it re-reads every artifact)."""
    artifacts, missing = _verify_artifacts(req)
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
