"""The sandbox verifies a job's evidence in the job's own dispatch when the task asks.

Real jobs in the real sandbox, with the worker's real ``verify_evidence`` reading the
artifact store the sandbox put the artifacts in.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.evidence.verify import EvidenceVerifier, verify
from activities.sandbox.job import Sandbox
from workflows.contracts.execution import (
    ExecuteJobInput,
    ExecutionOutcome,
    Verification,
    VerifyEvidenceInput,
)
from workflows.contracts.plan import Check, JobSpec, Resources

JOB = "import json\njson.dump({'rows': 3}, open('metrics.json', 'w'))\n"


def _request(code: str, checks: list[Check] | None) -> ExecuteJobInput:
    job = JobSpec(code=code, source=code, filename="job.py", expected_artifacts=["metrics.json"],
                  expected_metrics=["rows"], resources=Resources(memory_mb=256, timeout_s=20))
    return ExecuteJobInput(run_id="run-1", task_id="t1", job=job, verify_checks=checks)


async def _run(work_dir: Path, req: ExecuteJobInput, *, broken: bool = False
               ) -> tuple[ExecutionOutcome, LocalArtifactStore]:
    store = LocalArtifactStore(work_dir.parent / f"{work_dir.name}-store")

    async def unreachable(req: VerifyEvidenceInput) -> Verification:
        raise ApplicationError("the artifact store is unreachable")

    verifier = unreachable if broken else EvidenceVerifier(store).verify_evidence
    sandbox = Sandbox(work_dir=work_dir, heartbeat_every_s=0.2, max_processes=64, store=store,
                      verifier=verifier)
    return await ActivityEnvironment().run(sandbox.execute_job, req), store


async def test_a_job_asked_to_has_its_evidence_verified_in_the_same_dispatch(
        work_dir: Path) -> None:
    checks = [Check(metric="rows", op="==", value=3)]
    outcome, store = await _run(work_dir, _request(JOB, checks))
    assert outcome.outcome == "succeeded", outcome.reason
    assert outcome.verification is not None and outcome.verification.passed
    assert [a.name for a in outcome.verification.artifacts] == ["metrics.json"]
    # the same verdict a verify_evidence dispatch of its own gives
    alone = verify(VerifyEvidenceInput(task_id="t1", job=outcome_job(JOB), checks=checks,
                                       outcome=outcome.model_copy(update={"verification": None})),
                   store)
    assert outcome.verification == alone


async def test_a_failing_check_is_the_verification_s_not_the_job_s(work_dir: Path) -> None:
    outcome, _ = await _run(work_dir, _request(JOB, [Check(metric="rows", op=">", value=5)]))
    assert outcome.outcome == "succeeded"
    assert outcome.verification is not None and not outcome.verification.passed
    assert "check failed: rows > 5" in outcome.verification.summary


async def test_nothing_is_verified_unless_asked_or_when_the_job_failed(work_dir: Path) -> None:
    unasked, _ = await _run(work_dir, _request(JOB, None))
    assert unasked.outcome == "succeeded" and unasked.verification is None
    failed, _ = await _run(work_dir, _request("raise SystemExit(3)", []))
    assert failed.outcome == "nonzero_exit" and failed.verification is None


async def test_a_verifier_that_fails_leaves_the_verification_to_the_task(
        work_dir: Path) -> None:
    outcome, _ = await _run(work_dir, _request(JOB, []), broken=True)
    assert outcome.outcome == "succeeded"  # the job's own outcome stands, and it is not rerun
    assert outcome.verification is None


def outcome_job(code: str) -> JobSpec:
    return _request(code, None).job
