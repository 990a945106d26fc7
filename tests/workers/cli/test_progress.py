"""How ``assay run --wait`` shows a run's progress: counts, phases, elapsed time, heartbeats.

Rendering is tested from snapshots alone (no server); the end-to-end path is in test_live.py.
"""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rich.console import Console

from activities.reports.numbers import byte_size, duration
from client.assay import TaskLive
from workers.cli.common import EXIT_FAILED, EXIT_OUTCOME, outcome_exit
from workers.cli.progress import Changes, Footer, Snapshot, beat_text, hint
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import RunProgress

T0 = datetime(2026, 11, 24, 2, 30, 0, tzinfo=UTC)


def snap(seconds: float, tasks: dict[str, Any], live: dict[str, TaskLive] | None = None,
         **extra: Any) -> Snapshot:
    progress = RunProgress.model_validate({"run_id": "r", "phase": "execute",
                                           "status": "running", "tasks": tasks,
                                           "order": list(tasks), **extra})
    return Snapshot(at=T0 + timedelta(seconds=seconds), started=T0, progress=progress,
                    live=live or {})


def job(line: Any = "epoch 3", elapsed: Any = 12.3, out: Any = 4200,
        started: float | None = None, beat: float | None = None) -> TaskLive:
    """Task 2's job; ``started`` and ``beat`` are seconds after T0 (the server's clock)."""
    return TaskLive("2", "execute", "execute_job",
                    {"elapsed_s": elapsed, "stdout_bytes": out, "last_line": line},
                    started=None if started is None else T0 + timedelta(seconds=started),
                    beat_at=None if beat is None else T0 + timedelta(seconds=beat))


def test_durations_and_sizes_read_short_in_binary_units() -> None:
    assert [duration(s, whole=True) for s in (0, 42.9, 185, 7620, -5)] == [
        "0 s", "42 s", "3 min 05 s", "2 h 07 min", "0 s"]
    assert [byte_size(n) for n in (812, 4200, 3_400_000, 9e12)] == [
        "812 B", "4.1 KiB", "3.24 MiB", "8.19 TiB"]


def test_the_headline_says_time_elapsed_counts_and_running_phases() -> None:
    shot = snap(64, {"1": "completed", "2": "running", "3": "pending"},
                {"2": job()})
    assert shot.headline() == "02:31:04  +1 min 04 s  tasks 1/3 done  running: 2 execute"
    assert snap(3, {}).headline() == "02:30:03  +3 s  phase execute (running)"


def test_counts_say_how_many_completed_and_how_many_failed() -> None:
    ended = snap(9, {"a": "completed", "b": "failed_final", "c": "deferred", "d": "running"})
    assert ended.headline() == ("02:30:09  +9 s  tasks 1/4 done, 1 deferred, 1 failed  "
                                "running: d running")
    changes = Changes(beats=False)
    changes.lines(snap(1, {"1": "running", "2": "running"}))
    assert changes.lines(snap(5, {"1": "completed", "2": "failed"})) == [
        "02:30:05  +5 s  task 1: completed", "02:30:05  +5 s  task 2: failed",
        "02:30:05  +5 s  tasks 1/2 done, 1 failed"]


@pytest.mark.parametrize(("beat", "shown"), [
    ({"elapsed_s": 12.3, "stdout_bytes": 4200, "last_line": "epoch 3"},
     "execute_job 12 s, 4.1 KiB out; last output: epoch 3"),
    ({"elapsed_s": "soon", "stdout_bytes": -1, "last_line": 7}, "execute_job"),
    ({"last_line": "\x1b[2J\x1b[31mred\x1b[0m \x1b]0;title\x07done\r\n\x00"},
     "execute_job; last output: red done"),
    ({"last_line": "x" * 100_000}, "execute_job; last output: " + "x" * 199 + "…"),
    ({}, "execute_job"),
])
def test_a_heartbeat_is_shown_bounded_and_printable(beat: dict[str, Any], shown: str) -> None:
    assert beat_text(TaskLive("2", "execute", "execute_job", beat)) == shown


def test_elapsed_runs_from_the_activitys_start_and_the_last_line_says_its_age() -> None:
    # The server kept a heartbeat at +20 s saying 12.3 s; at +30 s the job has run 28 s.
    live = job(started=2, beat=20)
    assert beat_text(live, T0 + timedelta(seconds=30)) == (
        "execute_job 28 s, 4.1 KiB out; last output 10 s ago: epoch 3")
    assert beat_text(job(started=2), T0 + timedelta(seconds=30)) == (
        "execute_job 28 s, 4.1 KiB out; last output: epoch 3")  # no beat time: no age


def test_changes_are_printed_once_with_counts_and_heartbeats_are_throttled() -> None:
    changes = Changes(beats=True)
    first = changes.lines(snap(1, {"1": "running", "2": "pending"},
                               {"1": job(line="", out=0)}))
    assert first == ["02:30:01  +1 s  run: execute (running)",
                     "02:30:01  +1 s  task 1: running (execute)",
                     "02:30:01  +1 s  tasks 0/2 done"]  # no beat line before the job prints
    assert changes.lines(snap(2, {"1": "running", "2": "pending"},
                              {"1": job()})) == [  # its first printed line: at once
        "02:30:02  +2 s  task 1: execute_job 12 s, 4.1 KiB out; last output: epoch 3"]
    assert changes.lines(snap(3, {"1": "running", "2": "pending"},
                              {"1": job(line="epoch 4")})) == []  # under 10 s since
    assert changes.lines(snap(12, {"1": "completed", "2": "running"}, {"2": job()})) == [
        "02:30:12  +12 s  task 1: completed",
        "02:30:12  +12 s  task 2: running (execute)",
        "02:30:12  +12 s  tasks 1/2 done",
        "02:30:12  +12 s  task 2: execute_job 12 s, 4.1 KiB out; last output: epoch 3"]
    assert not Changes(beats=False).lines(snap(1, {}, {"1": job()}))[1:]


def test_a_new_attempt_is_said_at_once_with_why_the_last_one_failed() -> None:
    """The elapsed time restarts with each attempt: the line says a new one began."""
    changes = Changes(beats=True)
    changes.lines(snap(1, {"1": "running"}, {"1": job(started=0)}))
    retried = replace(job(line="", out=0, started=4), attempt=2,
                      last_failure="DiskFull: the work root has 0 bytes free")
    assert changes.lines(snap(5, {"1": "running"}, {"1": retried})) == [
        "02:30:05  +5 s  task 1: execute_job attempt 2 1 s, 0 B out; attempt 1 failed: "
        "DiskFull: the work root has 0 bytes free"]
    assert changes.lines(snap(6, {"1": "running"}, {"1": retried})) == []  # said once


def test_a_job_that_prints_nothing_gets_its_first_beat_line_after_the_throttle() -> None:
    changes = Changes(beats=True)
    silent = {"1": job(line="", out=0, started=0)}
    changes.lines(snap(1, {"1": "running"}, silent))
    assert not any("execute_job" in line for line in changes.lines(snap(5, {"1": "running"},
                                                                        silent)))
    assert changes.lines(snap(11, {"1": "running"}, silent)) == [
        "02:30:11  +11 s  task 1: execute_job 11 s, 0 B out"]


def test_a_finishing_task_and_the_runs_end_read_in_order() -> None:
    changes = Changes(beats=False)
    changes.lines(snap(1, {"1": "running", "2": "running"}, {"2": job()}))
    finishing = TaskLive("2", "done")
    assert changes.lines(snap(2, {"1": "running", "2": "running"}, {"2": finishing})) == []
    final = snap(3, {"1": "completed", "2": "completed"}, phase="done", status="completed")
    assert changes.lines(final) == ["02:30:03  +3 s  task 1: completed",
                                    "02:30:03  +3 s  task 2: completed",
                                    "02:30:03  +3 s  tasks 2/2 done",
                                    "02:30:03  +3 s  run: done (completed)"]


def test_hints_name_who_decides_and_how() -> None:
    gate = GateRecord(gate="plan", opened_at=T0)
    one = snap(1, {"1": "pending"}, waiting=gate, approvers=["ada"], status="waiting")
    assert hint(one) == ("  the plan gate waits; decided by ada: assay approve r --gate plan "
                         "--by ada")
    two = snap(1, {"1": "pending"}, waiting=gate, approvers=["ada", "bob"])
    assert hint(two) == ("  the plan gate waits; decided by one of ada, bob: assay approve r "
                         "--gate plan --by NAME")
    anyone = snap(1, {"1": "pending"}, waiting=gate)
    assert hint(anyone) == ("  the plan gate waits; anyone may decide: assay approve r "
                            "--gate plan [--by NAME]")
    plan = snap(1, {}, status="waiting")
    assert hint(plan) == "  waiting for a plan: assay plan r PLAN.json [--by NAME]"
    hostile = snap(1, {"1": "pending"}, waiting=gate, approvers=["\x1b[2J" + "a" * 500] * 30)
    text = hint(hostile) or ""
    assert "\x1b" not in text and len(text) < 1000 and "and 20 more" in text


def test_on_a_terminal_a_live_footer_shows_running_tasks_and_lines_stay_text() -> None:
    out = io.StringIO()
    footer = Footer(Console(file=out, force_terminal=True, width=120))
    with footer.live:
        footer.echo("02:30:01  +1s  waiting for a plan: assay plan r PLAN.json [--by NAME]")
        footer.show(snap(5, {"1": "running"}, {"1": job(line="\x1b[2Jepoch 9")}))
    drawn = out.getvalue()
    assert "[--by NAME]" in drawn  # brackets are text, not markup
    assert "1/1" not in drawn and "tasks 0/1 done  running: 1 execute" in drawn
    assert "task 1: execute  execute_job 12 s, 4.1 KiB out; last output: epoch 9" in drawn
    assert "\x1b[2J" not in drawn  # the job's escape is gone (rich draws its own)


def test_exit_codes_by_outcome_are_distinct() -> None:
    codes = [outcome_exit(s) for s in ("completed", "partial", "failed", "rejected",
                                       "deferred")]
    assert codes == [0, 4, 5, 6, 7] and set(EXIT_OUTCOME.values()) == set(codes)
    assert outcome_exit("running") == EXIT_FAILED  # never a success for a status unknown
