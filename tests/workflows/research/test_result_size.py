"""A run's result always fits: many artifacts, many tasks, limits that cannot be met.

Before results were capped, four tasks of 999 artifacts made a run's result of 2-4 MB: over
Temporal's 2 MiB payload limit, so completing the run failed and was retried for ever, each
retry writing another report. These runs go through the real workflows and report writer.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.reports.writer import ReportWriter
from activities.sandbox.artifacts import store_artifacts
from tests.workflows.harness import Harness, task
from workflows.common import sizes
from workflows.common.sizes import json_size
from workflows.contracts.execution import Artifact, ExecuteJobInput, ExecutionOutcome
from workflows.contracts.results import ResearchResult, RunReport

FILES = 999
NAMES = [f"results/table-part-{i:04d}-of-0999.csv" for i in range(FILES)]


async def many_files(req: ExecuteJobInput) -> ExecutionOutcome:
    """A job that leaves 999 small files, every one of them declared."""
    workspace = Path(str(req.job.args["root"])) / req.run_id / req.task_id / "attempt-1"
    (workspace / "results").mkdir(parents=True)
    artifacts: list[Artifact] = []
    for name in NAMES:
        path = workspace / name
        path.write_text(f"{req.task_id} {name}\n")
        artifacts.append(Artifact(name=name, size=path.stat().st_size, path=str(path),
                                  sha256=hashlib.sha256(path.read_bytes()).hexdigest()))
    # into the harness's store, as the sandbox does, where verification reads them
    store_artifacts(LocalArtifactStore(Path(str(req.job.args["root"])).parent / "store"),
                    artifacts)
    return ExecutionOutcome(outcome="succeeded", exit_code=0, artifacts=artifacts,
                            metrics={"score": 0.9}, workspace=str(workspace))


def writing_harness(env: WorkflowEnvironment, queue: str, root: Path,
                    **overrides: Any) -> Harness:
    """A harness whose reports are real files under ``root / "runs"``."""
    writer = ReportWriter(root / "runs")
    return Harness(env, queue, root, overrides={
        "write_report": writer.write_report, "write_task_report": writer.write_task_report,
        **overrides})


async def history_bytes(env: WorkflowEnvironment, workflow_id: str) -> dict[str, int]:
    """Bytes of a workflow's history: ``total``, and per kind of event."""
    handle: WorkflowHandle[Any, Any] = env.client.get_workflow_handle(workflow_id)
    history = await handle.fetch_history()
    sizes: dict[str, int] = {"total": 0}
    for event in history.events:
        kind = event.WhichOneof("attributes") or ""
        sizes[kind.removesuffix("_event_attributes")] = (
            sizes.get(kind.removesuffix("_event_attributes"), 0) + event.ByteSize())
        sizes["total"] += event.ByteSize()
    return sizes


def written_report(result: ResearchResult) -> RunReport:
    assert result.report is not None
    return RunReport.model_validate_json(Path(result.report.results_json).read_text())


async def test_four_tasks_of_999_artifacts_end_small_and_the_report_lists_them_all(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = writing_harness(time_env, task_queue, tmp_path, execute_job=many_files)
    decisions = [task(f"t{i}", root=str(tmp_path / "work")) for i in range(4)]
    for decision in decisions:
        decision["job"]["expected_artifacts"] = NAMES
    await harness.run(decisions)
    result = harness.result
    assert result is not None and result.status == "completed"
    assert json_size(result) < 4_000, "a run's result carries no artifact lists"
    assert [(t.status, t.artifact_count) for t in result.tasks] == [("completed", FILES)] * 4
    history = await history_bytes(time_env, result.run_id)
    assert history["child_workflow_execution_completed"] < 4 * 64_000  # 100 artifacts a task
    assert history["workflow_execution_completed"] < 4_000
    report = written_report(result)
    assert [len(t.artifacts) for t in report.tasks] == [FILES] * 4
    assert all(len(t.provenance.checksums) == FILES for t in report.tasks)
    assert result.report is not None
    summary = Path(result.report.summary_md).read_text()
    assert summary.count("- Artifact `results/table-part-") == 4 * FILES
    files = sorted(p.name for p in (tmp_path / "runs" / result.run_id).iterdir())
    assert files == [f"execution_results_{result.timestamp}.json",
                     f"execution_summary_{result.timestamp}.md", "figures", "ledger.jsonl",
                     "tasks"]


async def test_a_plan_of_many_trivial_tasks_completes_with_a_small_result(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    await harness.run([task(f"t{i:03d}") for i in range(100)], max_parallel=20)
    result = harness.result
    assert result is not None and result.status == "completed"
    assert result.task_counts == {"completed": 100} and len(result.tasks) == 100
    assert json_size(result) < 25_000  # ~200 bytes a task: id, status, reason
    history = await history_bytes(time_env, result.run_id)
    assert history["workflow_execution_completed"] < 25_000
    assert history["total"] < 100 * 12_000


async def test_the_reports_timestamp_is_the_runs_start_however_long_it_ran(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """So a report written again by a retried workflow task replaces its files."""
    harness = Harness(time_env, task_queue, tmp_path)
    gate = {"human": True, "timeout_s": 7200, "on_timeout": "approve"}
    report = await harness.run([task("a")], gates={"result": gate})
    assert report.finished_at - report.started_at >= timedelta(hours=2)
    assert report.timestamp == report.started_at.strftime("%Y%m%d_%H%M%S")
    assert harness.result is not None and harness.result.timestamp == report.timestamp


async def test_a_run_over_its_result_limit_ends_with_its_status_and_why(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sizes, "RUN_RESULT_LIMIT", 1800)
    harness = writing_harness(time_env, task_queue, tmp_path)
    await harness.run([task(f"t{i}") for i in range(5)])
    result = harness.result
    assert result is not None and result.status == "completed"
    assert result.tasks == [] and result.task_counts == {"completed": 5}
    assert result.omitted == ["the per-task list (5 tasks; counts kept)"]
    assert "over its 1,800-byte limit" in result.status_reason
    assert result.report is not None and result.report.results_json in result.status_reason
    assert len(written_report(result).tasks) == 5


async def test_a_task_over_its_result_limit_fails_with_why_and_blocks_its_dependants(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sizes, "TASK_RESULT_LIMIT", 800)
    harness = writing_harness(time_env, task_queue, tmp_path)
    await harness.run([task("a"), task("b", deps=["a"])])
    result = harness.result
    assert result is not None and result.status == "failed"
    first, second = result.tasks
    assert first.status == "failed" and "over the 800-byte limit" in first.status_reason
    assert "it ended completed" in first.status_reason
    assert second.status == "blocked"
    whole = written_report(result).tasks[0]
    assert whole.status == "failed" and whole.artifacts, "the report has the whole result"
    assert whole.status_reason.startswith("the task's result has ")
