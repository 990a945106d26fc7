"""What the client returns of runs: how a run's tasks stand, in words (pure; no server)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from workflows.common.sizes import fit_run, json_size
from workflows.contracts.execution import TaskStatus
from workflows.contracts.results import ResearchResult, RunProgress, TaskSummary
from workflows.runs import TaskTally, final_progress


def test_a_failed_run_does_not_read_as_all_done() -> None:
    assert str(TaskTally.of(["failed"])) == "0/1 done, 1 failed"
    assert str(TaskTally.of(["completed", "failed_final", "failed", "deferred"])) == (
        "1/4 done, 1 deferred, 2 failed")


def test_open_tasks_count_as_planned_but_neither_done_nor_failed() -> None:
    tally = TaskTally.of(["completed", "rejected", "pending", "running", "failed_retry"])
    assert str(tally) == "1/5 done, 1 rejected"
    assert (tally.total, tally.completed) == (5, 1)
    assert str(TaskTally.of([])) == "0/0 done"


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
