"""What the client returns of runs: how a run's tasks stand, in words (pure; no server)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from client.runs import RunSummary, TaskTally, final_progress
from workflows.common.sizes import fit_run, json_size
from workflows.contracts.execution import TaskStatus
from workflows.contracts.results import ResearchResult, RunProgress, TaskSummary


def test_a_failed_run_does_not_read_as_all_done() -> None:
    assert str(TaskTally.of(["failed"])) == "0/1 done, 1 failed"
    assert str(TaskTally.of(["completed", "failed_final", "failed", "deferred"])) == (
        "1/4 done, 1 deferred, 2 failed")


def test_open_tasks_count_as_planned_but_neither_done_nor_failed() -> None:
    tally = TaskTally.of(["completed", "rejected", "pending", "running"])
    assert str(tally) == "1/4 done, 1 rejected"
    assert (tally.total, tally.completed) == (4, 1)
    assert str(TaskTally.of([])) == "0/0 done"


def test_a_task_being_retried_is_counted_as_retrying() -> None:
    """A run whose only job timed out and is tried again once read "0/1 done"."""
    assert str(TaskTally.of(["failed_retry"])) == "0/1 done, 1 retrying"
    assert str(TaskTally.of(["completed", "failed", "failed_retry", "pending"])) == (
        "1/4 done, 1 failed, 1 retrying")


def test_a_run_temporal_stopped_counts_its_open_tasks_unfinished() -> None:
    """A timed-out run once read "0/1 done", as if its task might still complete."""
    assert str(TaskTally.stopped(["running"])) == "0/1 done, 1 unfinished"
    assert str(TaskTally.stopped(["completed", "pending", "failed_retry", "failed"])) == (
        "1/4 done, 1 failed, 2 unfinished")


def test_a_stopped_run_says_by_whom_and_why() -> None:
    summary = RunSummary(run_id="r", status="timed_out", start_time="2026-01-01T00:00:00+00:00",
                         assay_status="waiting", stop_reason="it ran past its timeout")
    assert summary.stopped and summary.shown_status == "timed_out"
    assert summary.stopped_text() == ("timed out by Temporal, without a result: it ran past "
                                      "its timeout")
    assert not RunSummary(run_id="r", status="completed", start_time="").stopped


START = datetime(2026, 1, 1, tzinfo=UTC)


def _result(statuses: dict[str, TaskStatus]) -> ResearchResult:
    tasks = [TaskSummary(task_id=tid, priority="MEDIUM", action=f"task {tid}", status=status,
                         status_reason=f"it ended {status}")
             for tid, status in statuses.items()]
    counts: dict[str, int] = dict(Counter[str](statuses.values()))
    return ResearchResult(run_id="r", plan_name="p", plan_sha256="0" * 64, status="partial",
                          timestamp="20260101_000000", started_at=START, finished_at=START,
                          tasks=tasks, task_counts=counts)


def test_a_completed_runs_progress_is_its_results_tasks_in_plan_order() -> None:
    progress = final_progress(_result({"b": "completed", "a": "failed_final"}), "done")
    assert progress is not None
    assert progress.order == ["b", "a"]
    assert progress.tasks == {"b": "completed", "a": "failed_final"}
    assert (progress.run_id, progress.phase, progress.status) == ("r", "done", "partial")
    assert progress.waiting is None and progress.approvers == []


def test_a_result_cut_to_its_limit_leaves_the_progress_to_the_query() -> None:
    result = _result({f"t{i}": "completed" for i in range(50)})
    cut = fit_run(result, limit=json_size(result) // 2)
    assert cut.tasks == [] and sum(cut.task_counts.values()) == 50
    assert final_progress(cut, "done") is None
    assert final_progress(result, None) is not None  # no phase recorded: it ended "done"
    assert final_progress(_result({}), "done") == RunProgress(
        run_id="r", phase="done", status="partial")  # a run with no plan has no tasks
