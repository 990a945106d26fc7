"""Evidence verification reads artifacts from the artifact store by digest, never by path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.evidence.verify import EvidenceVerifier, evaluate_check, verify
from workflows.contracts.execution import Artifact, ExecutionOutcome, VerifyEvidenceInput
from workflows.contracts.plan import Check, JobSpec


def request(path: Path | str, content: bytes) -> VerifyEvidenceInput:
    """A verification of one expected artifact recorded at ``path`` with ``content``'s digest."""
    artifact = Artifact(name="out.txt", path=str(path), size=len(content),
                        sha256=hashlib.sha256(content).hexdigest())
    job = JobSpec(code="pass", source="pass", filename="job.py", expected_artifacts=["out.txt"])
    outcome = ExecutionOutcome(outcome="succeeded", exit_code=0, artifacts=[artifact])
    return VerifyEvidenceInput(task_id="t1", job=job, outcome=outcome)


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


def stored(store: LocalArtifactStore, tmp_path: Path, content: bytes) -> Path:
    """Put ``content`` in the store, as the sandbox does after a job; the entry's path."""
    source = tmp_path / "made"
    source.write_bytes(content)
    digest = store.put(source).sha256
    source.unlink()
    return store.root / "sha256" / digest[:2] / digest


def test_a_stored_artifact_with_its_checksum_is_verified(store: LocalArtifactStore,
                                                         tmp_path: Path) -> None:
    stored(store, tmp_path, b"result")
    # the recorded path is on another host: only the digest counts
    assert verify(request("/elsewhere/work/run/t1/attempt-1/out.txt", b"result"), store).passed


def test_the_recorded_path_is_never_read(store: LocalArtifactStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"root only")
    secret.chmod(0o600)
    verdict = verify(request(secret, b"root only"), store)  # the right checksum, even
    assert not verdict.passed
    assert verdict.missing == ["artifact 'out.txt' is not in the artifact store"]


def test_a_link_in_the_store_pointing_out_is_refused(store: LocalArtifactStore,
                                                     tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"root only")
    entry = stored(store, tmp_path, b"root only")
    entry.unlink()
    os.symlink(secret, entry)
    verdict = verify(request("out.txt", b"root only"), store)
    assert not verdict.passed
    assert "symbolic link" in verdict.missing[0] and "refused" in verdict.missing[0]


def test_a_missing_empty_or_changed_artifact_is_named(store: LocalArtifactStore,
                                                      tmp_path: Path) -> None:
    assert verify(request("out.txt", b"x"), store).missing == [
        "artifact 'out.txt' is not in the artifact store"]
    stored(store, tmp_path, b"")
    assert verify(request("out.txt", b""), store).missing == ["artifact 'out.txt' is empty"]
    entry = stored(store, tmp_path, b"result")
    entry.chmod(0o644)
    entry.write_bytes(b"changed")
    assert verify(request("out.txt", b"result"), store).missing == [
        "artifact 'out.txt' changed after the job ended (checksum mismatch)"]


def test_a_failed_check_prints_its_numbers_as_the_report_does() -> None:
    check = Check(metric="p_value", op="<", value=0.05)
    result = evaluate_check(check, {"p_value": 0.23629377407081195})
    assert not result.passed and result.actual == 0.23629377407081195
    assert result.reason == "p_value = 0.2363, expected < 0.05"
    assert evaluate_check(Check(metric="n", op=">", value=10), {"n": 3}).reason == \
        "n = 3, expected > 10"


async def test_verification_heartbeats_while_it_reads_artifacts_back(
        store: LocalArtifactStore, tmp_path: Path) -> None:
    content = os.urandom(1 << 20) * 96  # read back and hashed: longer than a few beats
    req = request(stored(store, tmp_path, content), content)
    beats: list[Any] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    verifier = EvidenceVerifier(store, heartbeat_every_s=0.005)
    verification = await env.run(verifier.verify_evidence, req)
    assert verification.passed, verification.summary
    assert beats and all(b == ({"phase": "verify"},) for b in beats)


ESTIMATE = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "n": 442, "method": "bootstrap"}


def test_a_check_compares_an_estimate_by_its_value_or_the_bound_it_names() -> None:
    assert evaluate_check(Check(metric="r2", op=">=", value=0.45), {"r2": ESTIMATE}).passed
    low = evaluate_check(Check(metric="r2.ci_low", op=">=", value=0.45), {"r2": ESTIMATE})
    assert not low.passed and low.actual == 0.421
    assert low.reason == "r2.ci_low = 0.421, expected >= 0.45"
    failed = evaluate_check(Check(metric="r2", op=">=", value=0.5), {"r2": ESTIMATE})
    assert failed.reason == "r2 = 0.49 [0.421, 0.55] 95 %, expected >= 0.5"
    none = evaluate_check(Check(metric="r2.ci_low", op=">=", value=0.4), {"r2": 0.49})
    assert not none.passed and none.reason == "metric 'r2.ci_low': 0.49 has no ci_low"


def test_a_malformed_estimate_fails_verification_naming_the_metric(
        store: LocalArtifactStore, tmp_path: Path) -> None:
    path = stored(store, tmp_path, b"x")
    req = request(path, b"x")
    bad = {"value": 0.7, "ci": [0.4, 0.6], "level": 0.95}
    outcome = req.outcome.model_copy(update={"metrics": {"r2": ESTIMATE, "r2_gain": bad,
                                                         "per_class": {"a": 1}}})
    ver = verify(req.model_copy(update={"outcome": outcome}), store)
    assert not ver.passed
    assert ver.missing == ["metric 'r2_gain': value 0.7 lies outside its interval [0.4, 0.6]"]
    good = req.outcome.model_copy(update={"metrics": {"r2": ESTIMATE, "n": 3}})
    assert verify(req.model_copy(update={"outcome": good}), store).passed
