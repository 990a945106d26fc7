"""What the client returns of runs: how a run's tasks stand, in words (pure; no server)."""

from __future__ import annotations

from workflows.runs import TaskTally


def test_a_failed_run_does_not_read_as_all_done() -> None:
    assert str(TaskTally.of(["failed"])) == "0/1 done, 1 failed"
    assert str(TaskTally.of(["completed", "failed_final", "failed", "deferred"])) == (
        "1/4 done, 1 deferred, 2 failed")


def test_open_tasks_count_as_planned_but_neither_done_nor_failed() -> None:
    tally = TaskTally.of(["completed", "rejected", "pending", "running", "failed_retry"])
    assert str(tally) == "1/5 done, 1 rejected"
    assert (tally.total, tally.completed) == (5, 1)
    assert str(TaskTally.of([])) == "0/0 done"
