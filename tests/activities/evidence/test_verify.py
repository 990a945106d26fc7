"""Evidence verification reads artifacts only below its own work directory, never via links."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from activities.evidence.verify import evaluate_check, verify
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
def work_dir(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "run" / "t1" / "attempt-1").mkdir(parents=True)
    return root


def test_an_artifact_below_the_work_dir_with_its_checksum_is_verified(work_dir: Path) -> None:
    path = work_dir / "run" / "t1" / "attempt-1" / "out.txt"
    path.write_bytes(b"result")
    assert verify(request(path, b"result"), work_dir).passed


def test_a_file_outside_the_work_dir_is_never_read(work_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"root only")
    secret.chmod(0o600)
    verdict = verify(request(secret, b"root only"), work_dir)  # the right checksum, even
    assert not verdict.passed
    assert verdict.missing == [f"artifact 'out.txt' is recorded at {secret}, outside this "
                               "worker's work directory; it was not read"]


@pytest.mark.parametrize("recorded", ["{work}/run/../../secret.txt", "{work}//run/x",
                                      "{work}/run/./t1/out.txt"])
def test_dot_dot_and_odd_paths_below_the_work_dir_are_not_read(
        work_dir: Path, tmp_path: Path, recorded: str) -> None:
    (tmp_path / "secret.txt").write_bytes(b"root only")
    verdict = verify(request(recorded.format(work=work_dir), b"root only"), work_dir)
    assert not verdict.passed and "it was not read" in verdict.missing[0]


def test_a_link_in_the_workspace_pointing_out_is_refused(work_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"root only")
    link = work_dir / "run" / "t1" / "attempt-1" / "out.txt"
    os.symlink(secret, link)
    verdict = verify(request(link, b"root only"), work_dir)
    assert not verdict.passed
    assert "symbolic link" in verdict.missing[0] and "refused" in verdict.missing[0]


def test_a_missing_empty_or_changed_artifact_is_named(work_dir: Path) -> None:
    attempt = work_dir / "run" / "t1" / "attempt-1"
    assert verify(request(attempt / "out.txt", b"x"), work_dir).missing == [
        f"artifact 'out.txt' is gone from {attempt / 'out.txt'}"]
    (attempt / "out.txt").write_bytes(b"")
    assert verify(request(attempt / "out.txt", b""), work_dir).missing == [
        "artifact 'out.txt' is empty"]
    (attempt / "out.txt").write_bytes(b"changed")
    assert verify(request(attempt / "out.txt", b"result"), work_dir).missing == [
        "artifact 'out.txt' changed after the job ended (checksum mismatch)"]


def test_a_failed_check_prints_its_numbers_as_the_report_does() -> None:
    check = Check(metric="p_value", op="<", value=0.05)
    result = evaluate_check(check, {"p_value": 0.23629377407081195})
    assert not result.passed and result.actual == 0.23629377407081195
    assert result.reason == "p_value = 0.2363, expected < 0.05"
    assert evaluate_check(Check(metric="n", op=">", value=10), {"n": 3}).reason == \
        "n = 3, expected > 10"
