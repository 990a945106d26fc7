"""A run without a model's answer: a deterministic summary of its verified metrics and checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from activities.reports.verified import ANSWERED_BY, verified_answer
from activities.reports.writer import ReportWriter
from workflows.contracts.execution import CheckResult
from workflows.contracts.goal import RunAnswer
from workflows.contracts.plan import Check
from workflows.contracts.results import RunReport, TaskResult

R2 = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "n": 442, "method": "bootstrap"}


def tasks() -> list[TaskResult]:
    held = CheckResult(check=Check(metric="rows", op="==", value=442), passed=True, actual=442)
    missed = CheckResult(check=Check(metric="r2", op=">=", value=0.5), passed=False,
                         actual=0.49, reason="r2 = 0.49 [0.421, 0.55] 95 %, expected >= 0.5")
    return [
        TaskResult(task_id="fit", status="completed", status_reason="ok",
                   metrics={"r2": R2, "rows": 442, "note": "text", "curve": [1, 2]},
                   checks=[held, missed]),
        TaskResult(task_id="plot", status="failed", status_reason="exit 1: no display"),
    ]


def test_the_answer_counts_tasks_and_checks_and_lists_what_was_verified() -> None:
    answer = verified_answer(tasks())
    assert answer is not None
    assert answer.answer == ("1 of 2 tasks completed with verified evidence; 1 of 2 declared "
                             "checks held. Not completed: plot (failed).")
    assert answer.analysis == ("fit: r2 = 0.49 [0.421, 0.55] 95 %, rows = 442; checks: "
                               "rows == 442 held, r2 >= 0.5 did not hold")
    assert answer.caveats[:2] == [
        "task plot failed: exit 1: no display",
        "task fit: check r2 >= 0.5 did not hold: r2 = 0.49 [0.421, 0.55] 95 %, expected >= 0.5"]
    assert "no model interpreted them" in answer.caveats[-1]
    assert verified_answer([]) is None
    assert verified_answer(tasks()) == answer  # deterministic


def report(**fields: object) -> RunReport:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return RunReport.model_validate({
        "run_id": "r", "plan_name": "p", "plan_sha256": "0" * 64, "status": "partial",
        "timestamp": "20260101_000000", "started_at": now, "finished_at": now,
        "tasks": tasks(), **fields})


def test_a_plan_run_without_a_model_ends_with_it_in_its_results_and_report(
        tmp_path: Path) -> None:
    paths = ReportWriter(tmp_path)._write(report())  # pyright: ignore[reportPrivateUsage]
    written = json.loads(Path(paths.results_json).read_text())
    assert written["answer_by"] == ANSWERED_BY
    assert written["answer"]["answer"].startswith("1 of 2 tasks completed")
    summary = Path(paths.summary_md).read_text()
    assert "## Answer\n\nWritten by the verified evidence (no model).\n\n> 1 of 2 tasks" in summary


def test_the_output_processors_answer_is_kept_and_said_to_be_its(tmp_path: Path) -> None:
    given = RunAnswer(answer="ridge does not beat OLS here")
    paths = ReportWriter(tmp_path)._write(report(answer=given))  # pyright: ignore[reportPrivateUsage]
    written = json.loads(Path(paths.results_json).read_text())
    assert written["answer"]["answer"] == "ridge does not beat OLS here"
    assert written["answer_by"] == "output processor"


def test_numbers_of_the_output_processors_answer_no_metric_holds_are_flagged(
        tmp_path: Path) -> None:
    given = RunAnswer(answer="R² is 0.49 (95 % CI 0.421\u20130.55) over 442 rows, so 0.5 is not "
                             "ruled out; ridge would reach 0.73.",
                      caveats=["the plot failed; 12.5 % of rows may be outliers"])
    paths = ReportWriter(tmp_path)._write(report(answer=given))  # pyright: ignore[reportPrivateUsage]
    written = json.loads(Path(paths.results_json).read_text())
    assert written["answer_unheld"] == ["0.73", "12.5 %"]
    summary = Path(paths.summary_md).read_text()
    assert "**Not held by a verified metric: 0.73, 12.5 %.**" in summary


def test_one_task_and_one_check_are_counted_in_the_singular() -> None:
    answer = verified_answer([tasks()[0].model_copy(update={"checks": tasks()[0].checks[:1]})])
    assert answer is not None
    assert answer.answer.startswith("1 of 1 task completed with verified evidence; 1 of 1 "
                                    "declared check held.")
