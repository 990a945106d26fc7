"""Report files: written whole, replaced (never added to) when written again, every artifact
listed from the file each task wrote."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.reports.writer import ReportWriter
from tests.workflows.common.test_sizes import many_artifacts
from workflows.common.sizes import bound_task
from workflows.contracts.results import (
    RunReport,
    TaskResult,
    WriteReportInput,
    WriteTaskReportInput,
)

START = datetime(2026, 1, 1, tzinfo=UTC)


def report(tasks: list[TaskResult], *, finished: datetime = START,
           reason: str = "completed: 1 completed") -> RunReport:
    return RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64, status="completed",
                     timestamp=START.strftime("%Y%m%d_%H%M%S"), started_at=START,
                     finished_at=finished, tasks=tasks, status_reason=reason)


async def write(writer: ReportWriter, run: RunReport) -> None:
    await ActivityEnvironment().run(writer.write_report, WriteReportInput(report=run))


async def test_a_report_written_again_replaces_its_files(tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path)
    task = TaskResult(task_id="a", status="completed", status_reason="ok")
    await write(writer, report([task]))
    await write(writer, report([task], finished=START + timedelta(minutes=5),
                               reason="written again"))
    files = sorted(p.name for p in (tmp_path / "run-1").iterdir())
    assert files == ["execution_results_20260101_000000.json",
                     "execution_summary_20260101_000000.md", "figures", "ledger.jsonl"]
    results = RunReport.model_validate_json(
        (tmp_path / "run-1" / files[0]).read_text(encoding="utf-8"))
    assert results.status_reason == "written again"


async def test_a_runs_folders_reports_and_ledger_are_its_users_only(tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path / "runs")
    task = TaskResult(task_id="a", status="completed", status_reason="ok")
    await ActivityEnvironment().run(writer.write_task_report,
                                    WriteTaskReportInput(run_id="run-1", result=task))
    await write(writer, report([task]))
    folder = tmp_path / "runs" / "run-1"
    for private in (tmp_path / "runs", folder, folder / "tasks"):
        assert private.stat().st_mode & 0o777 == 0o700, private
    for written in ("ledger.jsonl", "execution_results_20260101_000000.json",
                    "execution_summary_20260101_000000.md", "tasks/a.json"):
        assert (folder / written).stat().st_mode & 0o777 == 0o600, written


async def test_a_task_written_again_keeps_one_file(tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path)
    env = ActivityEnvironment()
    whole = many_artifacts(3)
    first = await env.run(writer.write_task_report, WriteTaskReportInput(run_id="run-1",
                                                                          result=whole))
    again = await env.run(writer.write_task_report, WriteTaskReportInput(
        run_id="run-1", result=whole.model_copy(update={"status_reason": "again"})))
    assert first == again == str(tmp_path / "run-1" / "tasks" / "t.json")
    assert [p.name for p in (tmp_path / "run-1" / "tasks").iterdir()] == ["t.json"]
    assert TaskResult.model_validate_json(Path(again).read_text()).status_reason == "again"


async def test_the_report_lists_every_artifact_from_the_file_each_task_wrote(
        tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path)
    whole = many_artifacts(999)
    path = await ActivityEnvironment().run(
        writer.write_task_report, WriteTaskReportInput(run_id="run-1", result=whole))
    capped = bound_task(whole.model_copy(update={"detail": path}))
    assert len(capped.artifacts) == 100
    await write(writer, report([capped]))
    folder = tmp_path / "run-1"
    results = RunReport.model_validate_json(
        (folder / "execution_results_20260101_000000.json").read_text(encoding="utf-8"))
    (task,) = results.tasks
    assert len(task.artifacts) == len(task.provenance.checksums) == 999
    assert task.omitted == [] and task.status_reason == capped.status_reason
    summary = (folder / "execution_summary_20260101_000000.md").read_text(encoding="utf-8")
    assert summary.count("- Artifact `results/table-part-") == 999
    assert "- Artifact `results/table-part-0998.csv`" in summary
    assert "not listed here" not in summary


async def test_a_task_whose_file_is_gone_is_reported_as_its_run_received_it(
        tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path)
    capped = bound_task(many_artifacts(999))  # its detail names a file that was never written
    await write(writer, report([capped]))
    summary = (tmp_path / "run-1" / "execution_summary_20260101_000000.md").read_text()
    assert summary.count("- Artifact `results/table-part-") == 100
    assert "- … and 899 more artifacts, not listed here" in summary
    assert "artifacts: 100 of 999 listed" in summary
    assert "/data/runs/r/tasks/t.json" in summary


async def test_a_reset_execution_writes_its_report_beside_the_first(tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path)
    task = TaskResult(task_id="a", status="completed", status_reason="ok")
    first, again = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-9b8a-5b4a3f2e1d0c"
    await write(writer, report([task]).model_copy(
        update={"execution": first, "first_execution": first}))
    await write(writer, report([task], reason="re-run").model_copy(
        update={"execution": again, "first_execution": first}))
    runs = tmp_path / "run-1"
    reset = runs / "reset-5b4a3f2e1d0c"
    for folder, reason in ((runs, "completed: 1 completed"), (reset, "re-run")):
        results = RunReport.model_validate_json(
            (folder / "execution_results_20260101_000000.json").read_text(encoding="utf-8"))
        assert results.status_reason == reason
        assert (folder / "ledger.jsonl").is_file()
    summary = (reset / "execution_summary_20260101_000000.md").read_text(encoding="utf-8")
    assert f"- Execution: `{again}`, a reset of `{first}`" in summary
    assert "- Execution:" not in (runs / "execution_summary_20260101_000000.md").read_text(
        encoding="utf-8")


@pytest.mark.parametrize(("run_id", "task_id", "branch"), [
    ("../../outside", "a", None), ("/tmp/outside", "a", None), ("..", "a", None),
    ("run-1", "../../../outside", None), ("run-1", "a", "x/../../../../outside")])
async def test_ids_a_client_chose_never_leave_the_runs_folder(
        tmp_path: Path, run_id: str, task_id: str, branch: str | None) -> None:
    runs = tmp_path / "deep" / "data" / "runs"
    writer = ReportWriter(runs)
    task = TaskResult(task_id=task_id, status="completed", status_reason="ok", branch=branch)
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(writer.write_task_report,
                                        WriteTaskReportInput(run_id=run_id, result=task))
    assert err.value.type == "ReportUnwritable" and err.value.non_retryable
    assert "single path component" in err.value.message
    if task_id == "a" and branch is None:
        run = report([task]).model_copy(update={"run_id": run_id})
        with pytest.raises(ApplicationError, match="single path component"):
            await write(writer, run)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # nothing written anywhere
