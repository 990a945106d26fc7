"""What the CLI shows of a finished run: its small result, and the report's detail."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore, StoredFile, StoreUnavailableError
from activities.reports.markdown import render_markdown
from activities.reports.writer import ReportWriter
from workers.cli.show import load_report, outcome_lines, report_file, summary_lines
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import (
    ReportPaths,
    ResearchResult,
    RunReport,
    TaskResult,
    TaskSummary,
    WriteReportInput,
    outline_report,
)
from workflows.contracts.spend import ModelSpend, Usage

WHEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def result(tmp_path: Path, **extra: object) -> ResearchResult:
    paths = ReportPaths(results_json=str(tmp_path / "results.json"),
                        summary_md=str(tmp_path / "summary.md"))
    return ResearchResult.model_validate({
        "run_id": "assay-run-p-0123456789", "plan_name": "p", "plan_sha256": "0" * 64,
        "status": "completed", "timestamp": "20261122_120000", "started_at": WHEN,
        "finished_at": WHEN, "report": paths, "task_counts": {"completed": 1},
        "tasks": [TaskSummary(task_id="a", status="completed", status_reason="ok",
                              artifact_count=999)], **extra})


def test_the_report_is_read_from_the_results_json_the_run_wrote(tmp_path: Path) -> None:
    run = result(tmp_path)
    whole = TaskResult(task_id="a", status="completed", status_reason="ok", metrics={"r": 1})
    written = RunReport(**run.run_fields(), tasks=[whole])
    (tmp_path / "results.json").write_text(written.model_dump_json())
    assert load_report(run) == written


def test_without_the_results_json_the_report_shows_each_tasks_status(tmp_path: Path) -> None:
    run = result(tmp_path)
    assert load_report(run) is None
    text = render_markdown(outline_report(run))
    assert "### Task a [MEDIUM] — completed" in text and "- Reason: ok" in text
    assert "- … and 999 more artifacts, not listed here" in text
    assert "the results JSON could not be read on this machine" in text


def test_a_result_without_its_task_list_prints_the_counts(tmp_path: Path) -> None:
    run = result(tmp_path, tasks=[], task_counts={"completed": 998, "failed": 2})
    lines = outcome_lines(run, "http://127.0.0.1:8233/namespaces/default")
    assert "  tasks: 998 completed, 2 failed" in lines
    assert not any(line.startswith("  task ") for line in lines)


def test_a_runs_row_has_task_counts_duration_and_a_printable_goal() -> None:
    from client.assay import RunSummary
    from client.runs import TaskTally
    from workers.cli.show import run_row

    tally = TaskTally.of(["completed", "completed", "failed_final", "completed"])
    ended = RunSummary(run_id="assay-run-p-1", status="completed", assay_status="partial",
                       start_time="2026-11-24T02:00:00+00:00",
                       close_time="2026-11-24T02:03:05+00:00", tasks=tally,
                       goal="\x1b[2JDo petals\ndiffer? " + "x" * 100)
    row = run_row(ended, datetime(2026, 11, 24, 9, 0, tzinfo=UTC))
    assert row[:5] == ["assay-run-p-1", "partial", "3/4 done, 1 failed", "2026-11-24 02:00",
                       "3 min 05 s"]
    assert "\x1b" not in row[5] and "\n" not in row[5] and len(row[5]) == 60
    running = RunSummary(run_id="r", status="running", start_time="2026-11-24T02:00:00+00:00")
    assert run_row(running, datetime(2026, 11, 24, 2, 0, 42, tzinfo=UTC))[1:5] == [
        "running", "-", "2026-11-24 02:00", "42 s"]
    reset = RunSummary(run_id="r", status="running", start_time="2026-11-24T02:00:00+00:00",
                       execution="0190a1b2-c3d4-7e5f-9b8a-5b4a3f2e1d0c")
    assert run_row(reset, datetime(2026, 11, 24, 2, 0, 42, tzinfo=UTC))[0] == "r"
    assert run_row(reset, datetime(2026, 11, 24, 2, 0, 42, tzinfo=UTC),
                   execution=True)[0] == "r @5b4a3f2e1d0c", "a reset run: one row per execution"



async def test_a_report_written_on_another_host_is_read_from_the_store(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    written = RunReport(**result(tmp_path).run_fields(), tasks=[
        TaskResult(task_id="a", status="completed", status_reason="ok", metrics={"r": 1})])
    writer = ReportWriter(tmp_path / "orchestration-host" / "runs", store)
    paths = await ActivityEnvironment().run(writer.write_report, WriteReportInput(report=written))
    summary = Path(paths.summary_md).read_bytes()
    shutil.rmtree(tmp_path / "orchestration-host")  # this machine cannot read its paths
    run = result(tmp_path).model_copy(update={"report": paths})

    assert load_report(run) is None
    report = load_report(run, store)
    assert report is not None and report.tasks[0].metrics == {"r": 1}
    with store.open(paths.summary_sha256) as stored:
        assert stored.read() == summary


class UnreachableStore(LocalArtifactStore):
    def put(self, path: Path) -> StoredFile:
        raise StoreUnavailableError("the object store did not answer")


async def test_a_store_out_of_reach_fails_the_report_for_a_retry_that_then_stores_it(
        tmp_path: Path) -> None:
    written = RunReport(**result(tmp_path).run_fields())
    runs = tmp_path / "runs"
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(
            ReportWriter(runs, UnreachableStore(tmp_path / "store")).write_report,
            WriteReportInput(report=written))
    assert caught.value.type == "StoreUnavailable" and not caught.value.non_retryable
    ledger = next(runs.glob("*/ledger.jsonl"))
    lines = ledger.read_text().splitlines()

    store = LocalArtifactStore(tmp_path / "store")  # the retry, with the store back
    paths = await ActivityEnvironment().run(ReportWriter(runs, store).write_report,
                                            WriteReportInput(report=written))
    assert paths.results_sha256 and paths.summary_sha256
    assert ledger.read_text().splitlines() == lines  # written once, not again


def test_a_rejected_run_says_who_rejected_it_when_and_why(tmp_path: Path) -> None:
    gate = GateRecord(gate="plan", status="rejected", opened_at=WHEN, decided_at=WHEN,
                      by="ada", comment="the split leaks the test set")
    lines = summary_lines(result(tmp_path, status="rejected", gates=[gate]))
    assert ("  rejected at the plan gate by ada on 2026-11-22 12:00: the split leaks the test "
            "set") in lines
    silent = gate.model_copy(update={"comment": "", "task_id": "2", "gate": "step"})
    assert "  rejected at the step gate of task 2 by ada on 2026-11-22 12:00 (no comment " \
           "given)" in summary_lines(result(tmp_path, status="rejected", gates=[silent]))


def test_wait_prints_each_reason_whole_and_wrapped(tmp_path: Path) -> None:
    """The result keeps 400 characters of a reason ("…[254 more]"); its report keeps all."""
    reason = " ".join(f"word{n}" for n in range(200))
    run = result(tmp_path, tasks=[TaskSummary(task_id="a", status="failed",
                                              status_reason=reason[:40] + "…[1234 more]")])
    lines = outcome_lines(run, "http://ui", reasons={"a": reason})
    start = lines.index(next(x for x in lines if x.startswith("  task a")))
    task = [x for x in lines[start:] if x.startswith("  ")]
    assert " ".join(" ".join(x.split()[3:] if i == 0 else x.split())
                    for i, x in enumerate(task)) == reason
    assert "more]" not in "\n".join(lines) and max(len(x) for x in task) <= 100
    assert all(x.startswith(" " * len("  task a        failed        ")) for x in task[1:])


def test_a_replayed_run_says_its_cost_was_not_spent(tmp_path: Path) -> None:
    spend = ModelSpend(calls=2, usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.072))
    run = result(tmp_path, model=spend)
    replayed = next(x for x in summary_lines(run, replayed=True) if x.startswith("  model:"))
    assert replayed.endswith("$0.0720 (replayed from a recording: the cost is the recorded "
                             "one; nothing was spent)")
    live = next(x for x in summary_lines(run) if x.startswith("  model:"))
    assert live.endswith("$0.0720")


def test_the_report_file_is_the_newest_results_json_of_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "assay-run-p-1"
    folder.mkdir()
    for stamp in ("20261122_120000", "20261123_120000"):
        (folder / f"execution_results_{stamp}.json").write_text("{}")
    assert report_file(tmp_path, "assay-run-p-1") == (
        folder / "execution_results_20261123_120000.json")
    assert report_file(tmp_path, "assay-run-none") is None
    for hostile in ("..", "../assay-run-p-1", "", "."):
        assert report_file(tmp_path / "sub", hostile) is None
