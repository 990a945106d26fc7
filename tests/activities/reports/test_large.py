"""The report of a run of over 1 000 tasks: summary tables, each task's detail in its file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.reports.markdown import render_markdown
from workflows.contracts.goal import RunAnswer
from workflows.contracts.results import PhaseMark, RunReport, TaskResult

START = datetime(2026, 1, 1, tzinfo=UTC)


def report_of(tasks: int, failed: int) -> RunReport:
    """A run of ``tasks`` tasks, the last ``failed`` of them failed, each with a metric."""
    results: list[TaskResult] = []
    for n in range(tasks):
        begun = START + timedelta(seconds=n)
        ok = n < tasks - failed
        results.append(TaskResult(
            task_id=f"t{n:05d}", priority="HIGH" if n % 2 else "LOW", action=f"point {n}",
            status="completed" if ok else "failed",
            status_reason="ok" if ok else f"exit code 1 in point {n}",
            metrics={"r2": n / tasks} if ok else {}, started_at=begun,
            finished_at=begun + timedelta(seconds=2 + n % 3),
            phases=[PhaseMark(phase="execute", at=begun)]))
    answer = RunAnswer(answer="\n".join(f"{t.task_id}: r2"
                                        for t in results[:150]))
    return RunReport(run_id="run-big", plan_name="sweep", plan_sha256="0" * 64,
                     status="partial", timestamp="20260101_000000", started_at=START,
                     finished_at=START + timedelta(hours=1), tasks=results, answer=answer,
                     completion_by_priority={"HIGH": {"total": 600, "completed": 600,
                                                      "rate": 1.0}})


def test_a_large_run_gets_summary_tables_not_a_section_per_task() -> None:
    text = render_markdown(report_of(1200, failed=150))
    assert "## Tasks by status" in text
    assert "| completed | 1050 | 87.5% |" in text and "| failed | 150 | 12.5% |" in text
    assert "| `r2` | 1050 | 0 | 0.4371 | 0.8742 |" in text
    assert "| `t01050` | failed | exit code 1 in point 1050 |" in text
    assert "The first 100 of 150; the results JSON lists them all." in text
    assert "`t01199`" not in text  # past the first 100 failed
    assert "### Task" not in text and "## Overview" not in text
    assert "more lines of the answer are in the results JSON, under `answer`" in text
    assert "t00020: r2" in text and "t00149: r2" not in text
    assert "`tasks/<task_id>.json`" in text
    assert len(text) < 20_000


def test_a_run_of_a_thousand_tasks_keeps_its_sections() -> None:
    text = render_markdown(report_of(1000, failed=0))
    assert "### Task t00999" in text and "## Tasks by status" not in text
