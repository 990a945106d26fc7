"""Evidence verification: a result counts only when its evidence is stored and checks hold.

Each artifact is read back from the artifact store by the sha256 the sandbox recorded (the
sandbox put it there after the job), never from a path: the verifier may run on another host
than the job, and a request cannot make the (root) worker say whether some file on its disk
exists or what it holds. The store hands out only bytes with the digest asked for, so a
damaged or replaced artifact fails verification as a checksum mismatch.
"""

from __future__ import annotations

import math
from typing import Any

from activities.artifacts.store import (
    ArtifactStore,
    DamagedEntryError,
    NotStoredError,
    StoreUnavailableError,
    UnsafeEntryError,
)
from activities.common.digests import drain
from activities.common.heartbeat import Heartbeats
from activities.reports.numbers import value
from activities.sandbox.sources import store_unreachable
from workflows.catalogue import VERIFY_EVIDENCE
from workflows.contracts.estimates import estimate_problem, part_of, point, reading
from workflows.contracts.execution import Artifact, CheckResult, Verification, VerifyEvidenceInput
from workflows.contracts.plan import Check


def evaluate_check(check: Check, metrics: dict[str, Any]) -> CheckResult:
    """Evaluate one ``checks`` entry against the job's metrics.

    An estimate is compared by its point value; a check may name one of its numbers
    (``r2.ci_low >= 0.4``: see :mod:`workflows.contracts.estimates`).
    """
    raw, part = reading(metrics, check.metric)
    if raw is None:
        return CheckResult(check=check, passed=False, reason=f"metric {check.metric!r} missing")
    actual = point(raw) if part is None else part_of(raw, part)
    if actual is None and part is not None:
        return CheckResult(check=check, passed=False,
                           reason=f"metric {check.metric!r}: {value(raw)} has no {part}")
    if actual is None or (isinstance(actual, float) and math.isnan(actual)):
        return CheckResult(check=check, passed=False,
                           reason=f"metric {check.metric!r} is {raw!r}, not a comparable value")
    try:
        passed = check.holds(actual)
    except TypeError:
        return CheckResult(check=check, passed=False, actual=actual,
                           reason=f"cannot compare {actual!r} {check.op} {check.value!r}")
    reason = "" if passed else (f"{check.metric} = {value(raw if part is None else actual)}, "
                                f"expected {check.op} {value(check.value)}")
    return CheckResult(check=check, passed=passed, actual=actual, reason=reason)


def _verify_artifacts(req: VerifyEvidenceInput,
                      store: ArtifactStore) -> tuple[list[Artifact], list[str]]:
    """Re-read every artifact the sandbox reported; list expected ones that are missing."""
    by_name = {a.name: a for a in req.outcome.artifacts}
    verified: list[Artifact] = []
    missing: list[str] = []
    for name in req.job.expected_artifacts:
        found = by_name.get(name)
        if found is None:
            missing.append(f"artifact {name!r} was not produced")
        elif problem := _artifact_problem(found, store):
            missing.append(problem)
        else:
            verified.append(found)
    return verified, missing


def _artifact_problem(artifact: Artifact, store: ArtifactStore) -> str:
    """Why ``artifact`` does not count as evidence (empty: it does)."""
    name = artifact.name
    try:
        with store.open(artifact.sha256) as handle:
            size, _ = drain(handle)
    except NotStoredError:
        return f"artifact {name!r} is not in the artifact store"
    except DamagedEntryError:
        return f"artifact {name!r} changed after the job ended (checksum mismatch)"
    except UnsafeEntryError as err:
        return f"artifact {name!r} is refused ({err})"
    except StoreUnavailableError as err:
        raise store_unreachable(f"verifying artifact {name!r}", err) from err
    except OSError as err:
        return f"artifact {name!r} cannot be read from the artifact store ({err.strerror})"
    if size == 0:
        return f"artifact {name!r} is empty"
    return ""


class EvidenceVerifier:
    """The ``verify_evidence`` activity of one sandbox worker, reading from the artifact store.

    Args:
        store: the artifact store the sandbox puts every artifact in.
        heartbeat_every_s: heartbeat interval while artifacts are read back.
    """

    def __init__(self, store: ArtifactStore, *, heartbeat_every_s: float = 1.0) -> None:
        self.store = store
        self._beats = Heartbeats(heartbeat_every_s)

    @VERIFY_EVIDENCE.defn
    async def verify_evidence(self, req: VerifyEvidenceInput) -> Verification:
        """Check artifacts (exist, non-empty, checksum unchanged), declared metrics and checks.

        Hashing runs in a thread so large artifacts never block the sandbox worker's event
        loop (and with it the heartbeats of jobs running beside this check), and the activity
        heartbeats meanwhile: a worker that dies mid-check is noticed within the heartbeat
        timeout, not the start-to-close timeout sized for reading every artifact.
        """
        return await self._beats.in_thread(verify, req, self.store)


def verify(req: VerifyEvidenceInput, store: ArtifactStore) -> Verification:
    """The verification itself (blocking: it re-reads every artifact from ``store``)."""
    artifacts, missing = _verify_artifacts(req, store)
    metrics = req.outcome.metrics
    if req.outcome.metrics_error:
        missing.append(f"metrics.json unusable: {req.outcome.metrics_error}")
    missing.extend(problem for name, raw in metrics.items()
                   if (problem := estimate_problem(name, raw)))
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
