"""Rescanning a working directory for evidence written under another path or case."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.evidence.relink import MAX_ENTRIES, Relinker, RescanInput, RescanResult
from activities.evidence.verify import EvidenceVerifier
from activities.reflection.reflection import diagnose
from activities.sandbox.job import Sandbox
from client.assay import DATA_CONVERTER
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome, VerifyEvidenceInput
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.reflection import DiagnoseInput


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    return tmp_path.resolve() / "work"


@pytest.fixture
def workspace(work_dir: Path) -> Path:
    path = work_dir / "run-1" / "t1" / "attempt-1"
    path.mkdir(parents=True)
    (path / "job.py").write_text("print(1)\n")
    return path


def write(path: Path, data: str = "a,b\n1,2\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data)
    return path


def rescan(work_dir: Path, workspace: Path | str, artifacts: list[str],
           metrics: list[str] | None = None) -> RescanResult:
    job = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                  expected_artifacts=artifacts, expected_metrics=metrics or [])
    outcome = ExecutionOutcome(outcome="succeeded", workspace=str(workspace))
    return Relinker(work_dir).rescan(RescanInput(task_id="t1", job=job, outcome=outcome))


def test_a_file_in_a_subdirectory_is_copied_to_its_expected_name(work_dir: Path,
                                                                  workspace: Path) -> None:
    found = write(workspace / "output" / "results.csv")
    result = rescan(work_dir, workspace, ["results.csv"])
    assert result.relinked == {"results.csv": "output/results.csv"}
    assert result.still_missing == []
    [artifact] = result.outcome.artifacts
    target = workspace / "results.csv"
    assert artifact.path == str(target) and not target.is_symlink()
    assert target.read_bytes() == found.read_bytes() and found.exists()
    assert artifact.size == found.stat().st_size
    assert artifact.sha256 == hashlib.sha256(found.read_bytes()).hexdigest()


def test_a_name_differing_in_case_is_found(work_dir: Path, workspace: Path) -> None:
    write(workspace / "Results.CSV")
    result = rescan(work_dir, workspace, ["results.csv"])
    assert result.relinked == {"results.csv": "Results.CSV"}


def test_expected_subdirectories_are_created(work_dir: Path, workspace: Path) -> None:
    write(workspace / "plot.png", "png")
    result = rescan(work_dir, workspace, ["figures/plot.png"])
    assert result.relinked == {"figures/plot.png": "plot.png"}
    assert (workspace / "figures" / "plot.png").read_text() == "png"


def test_several_candidates_are_ambiguous_and_named(work_dir: Path, workspace: Path) -> None:
    write(workspace / "a" / "results.csv")
    write(workspace / "b" / "RESULTS.csv")
    result = rescan(work_dir, workspace, ["results.csv"])
    assert result.still_missing == ["results.csv"] and result.relinked == {}
    assert "a/results.csv" in result.notes[0] and "b/RESULTS.csv" in result.notes[0]
    assert not (workspace / "results.csv").exists()


def test_a_case_match_of_the_full_path_settles_ambiguity(work_dir: Path,
                                                         workspace: Path) -> None:
    write(workspace / "Out" / "results.csv")
    write(workspace / "other" / "results.csv")
    result = rescan(work_dir, workspace, ["out/results.csv"])
    assert result.relinked == {"out/results.csv": "Out/results.csv"}


def test_symlinks_pointing_outside_are_ignored(work_dir: Path, workspace: Path,
                                               tmp_path: Path) -> None:
    secret = write(tmp_path / "outside" / "results.csv", "secret")
    (workspace / "results.CSV").symlink_to(secret)
    (workspace / "linked").symlink_to(secret.parent, target_is_directory=True)
    result = rescan(work_dir, workspace, ["results.csv"])
    assert result.still_missing == ["results.csv"]
    assert not (workspace / "results.csv").exists()


def test_a_symlink_on_the_expected_name_is_replaced_by_a_copy(work_dir: Path,
                                                              workspace: Path,
                                                              tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "secret")
    (workspace / "results.csv").symlink_to(secret)
    write(workspace / "out" / "results.csv", "real")
    result = rescan(work_dir, workspace, ["results.csv"])
    assert result.relinked == {"results.csv": "out/results.csv"}
    assert (workspace / "results.csv").read_text() == "real"
    assert not (workspace / "results.csv").is_symlink() and secret.read_text() == "secret"


def test_a_linked_parent_directory_is_never_written_through(work_dir: Path, workspace: Path,
                                                            tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / "figures").symlink_to(outside, target_is_directory=True)
    write(workspace / "plot.png", "png")
    result = rescan(work_dir, workspace, ["figures/plot.png"])
    assert result.still_missing == ["figures/plot.png"] and "could not copy" in result.notes[0]
    assert list(outside.iterdir()) == []


def test_search_depth_is_bounded(work_dir: Path, workspace: Path) -> None:
    write(workspace / "1" / "2" / "3" / "4" / "deep.csv")
    write(workspace / "1" / "2" / "3" / "4" / "5" / "deeper.csv")
    result = rescan(work_dir, workspace, ["deep.csv", "deeper.csv"])
    assert result.relinked == {"deep.csv": "1/2/3/4/deep.csv"}
    assert result.still_missing == ["deeper.csv"]


def test_search_entries_are_bounded(work_dir: Path, workspace: Path) -> None:
    budget = 40
    crowd = workspace / "crowd"
    crowd.mkdir()
    for i in range(budget + 1):
        (crowd / f"f{i:03d}").touch()
    write(workspace / "zz" / "data.bin")  # beyond the budget: never seen
    write(workspace / "results.CSV")  # shallow: seen before the budget runs out
    job = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                  expected_artifacts=["results.csv", "deeper/data.bin"])
    result = Relinker(work_dir, max_entries=budget).rescan(RescanInput(
        task_id="t1", job=job, outcome=ExecutionOutcome(outcome="succeeded",
                                                        workspace=str(workspace))))
    assert f"search stopped after {budget} entries" in result.notes
    assert result.relinked == {"results.csv": "results.CSV"}
    assert result.still_missing == ["deeper/data.bin"]
    assert MAX_ENTRIES == 5000  # the default every worker uses


def test_sandbox_files_are_not_evidence(work_dir: Path, workspace: Path) -> None:
    write(workspace / ".assay" / "results.csv")
    write(workspace / "deps" / "t0" / "results.csv")
    result = rescan(work_dir, workspace, ["results.csv", "JOB.py"])
    assert result.still_missing == ["results.csv", "JOB.py"]


def test_metrics_json_in_a_subdirectory_is_relinked_and_read(work_dir: Path,
                                                             workspace: Path) -> None:
    write(workspace / "run" / "metrics.json", json.dumps({"rmse": 0.25}))
    result = rescan(work_dir, workspace, [], metrics=["rmse"])
    assert result.relinked == {"metrics.json": "run/metrics.json"}
    assert result.outcome.metrics == {"rmse": 0.25} and result.outcome.metrics_error is None
    assert [a.name for a in result.outcome.artifacts] == ["metrics.json"]


def test_a_relinked_metrics_file_that_is_not_json_reports_why(work_dir: Path,
                                                              workspace: Path) -> None:
    write(workspace / "run" / "metrics.json", "not json")
    result = rescan(work_dir, workspace, [], metrics=["rmse"])
    assert result.outcome.metrics == {} and result.outcome.metrics_error is not None
    assert "not valid JSON" in result.notes[-1]


@pytest.mark.parametrize(("content", "reason"), [
    ('{"rmse": NaN}', "holds NaN"), ("[" * 100_000 + "]" * 100_000, "levels deep"),
    ('{"rmse": "\\ud800"}', "not valid Unicode")])
def test_a_relinked_metrics_file_goes_through_the_same_limits(
        work_dir: Path, workspace: Path, content: str, reason: str) -> None:
    write(workspace / "run" / "metrics.json", content)
    result = rescan(work_dir, workspace, [], metrics=["rmse"])
    error = result.outcome.metrics_error
    assert result.outcome.metrics == {} and error is not None and reason in error
    DATA_CONVERTER.payload_converter.to_payloads([result])  # Temporal can carry the result


@pytest.mark.parametrize("where", ["", "relative/path", "/", "gone"])
def test_a_workspace_that_is_not_the_sandboxs_is_never_touched(work_dir: Path, tmp_path: Path,
                                                               where: str) -> None:
    path = {"gone": str(work_dir / "run-1" / "nope"), "/": "/"}.get(where, where)
    write(tmp_path / "results.csv")
    result = rescan(work_dir, path, ["results.csv"])
    assert result.still_missing == ["results.csv"] and result.relinked == {}
    assert len(result.notes) == 1


async def test_rescan_runs_as_an_activity(work_dir: Path, workspace: Path) -> None:
    write(workspace / "out" / "results.csv")
    job = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                  expected_artifacts=["results.csv"])
    req = RescanInput(task_id="t1", job=job,
                      outcome=ExecutionOutcome(outcome="succeeded", workspace=str(workspace)))
    result = await ActivityEnvironment().run(Relinker(work_dir).rescan_artifacts, req)
    assert result.relinked == {"results.csv": "out/results.csv"}


def test_the_workflows_contract_and_the_activitys_are_wire_compatible(work_dir: Path,
                                                                      workspace: Path) -> None:
    write(workspace / "out" / "results.csv")
    job = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                  expected_artifacts=["results.csv", "gone.csv"])
    sent = RescanInput(task_id="t1", job=job, outcome=ExecutionOutcome(
        outcome="succeeded", workspace=str(workspace)))
    converter = DATA_CONVERTER.payload_converter
    [payload] = converter.to_payloads([sent])
    [req] = converter.from_payloads([payload], [RescanInput])
    result = Relinker(work_dir).rescan(req)
    [back] = converter.from_payloads(converter.to_payloads([result]), [RescanResult])
    assert isinstance(back, RescanResult)
    assert back.relinked == {"results.csv": "out/results.csv"}
    assert back.still_missing == ["gone.csv"]


# --- the verification retry, end to end with a real sandboxed job ---------------------------


@pytest.fixture
def shared_work_dir() -> Iterator[Path]:
    """A work directory every uid can reach (a root worker runs the job as another uid)."""
    path = Path(tempfile.mkdtemp(prefix="assay-relink-test-")).resolve()
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


JOB = """
import json, os
os.makedirs("out", exist_ok=True)
with open("out/results.csv", "w") as f:
    f.write("x,y\\n1,2\\n")
os.makedirs("logs", exist_ok=True)
with open("logs/metrics.json", "w") as f:
    json.dump({"rows": 1}, f)
"""


async def test_verification_retry_relinks_without_running_the_job_again(
        shared_work_dir: Path) -> None:
    job = JobSpec(code=JOB, source=JOB, filename="job.py", expected_artifacts=["results.csv"],
                  expected_metrics=["rows"], resources=Resources(memory_mb=256, timeout_s=20))
    env = ActivityEnvironment()
    store = LocalArtifactStore(shared_work_dir.parent / f"{shared_work_dir.name}-store")
    sandbox = Sandbox(work_dir=shared_work_dir, heartbeat_every_s=0.2, max_processes=64,
                      store=store)
    outcome = await env.run(sandbox.execute_job,
                            ExecuteJobInput(run_id="run-1", task_id="t1", job=job))
    assert outcome.outcome == "succeeded", outcome.reason
    verifier = EvidenceVerifier(store)
    first = await env.run(verifier.verify_evidence, VerifyEvidenceInput(task_id="t1", job=job,
                                                               outcome=outcome))
    assert not first.passed
    note = diagnose(DiagnoseInput(run_id="run-1", task_id="t1", kind="verification",
                                  attempt=1, job=job, outcome=outcome, verification=first))
    assert note.root_cause == "missing_artifact" and note.decision == "retry"
    assert set(note.relink) == {"results.csv", "metrics.json"}
    found = await env.run(Relinker(shared_work_dir, store).rescan_artifacts,
                          RescanInput(task_id="t1", job=job, outcome=outcome))
    assert found.still_missing == [], found.notes
    second = await env.run(verifier.verify_evidence, VerifyEvidenceInput(task_id="t1", job=job,
                                                                outcome=found.outcome))
    assert second.passed, second.summary
    assert os.path.exists(os.path.join(outcome.workspace, "results.csv"))
