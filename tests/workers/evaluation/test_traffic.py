"""Which traffic a task's run records to or replays from; offline skips; replay misses."""

from __future__ import annotations

import json
from pathlib import Path

from workers.evaluation.configurations import Configuration
from workers.evaluation.report import markdown, scores
from workers.evaluation.runner import Evaluation, Sample
from workers.evaluation.suite import load_suite
from workers.evaluation.traffic import MISSED, Traffic, replay_missed
from workers.settings import Settings

RECORDING = Path(__file__).resolve().parents[3] / "examples/eval/goals/dose-recording.jsonl"
FULL, NO_MEMORY = Configuration("full"), Configuration("no-memory", ("memory",))


def two_goals(folder: Path) -> Path:
    (folder / "t.csv").write_text("x\n1\n2\n")
    (folder / "rec.jsonl").write_bytes(RECORDING.read_bytes())
    common = {"level": 1, "goal": "Mean of x?", "data": ["t.csv"],
              "answer_format": "@m[mean], rounded to one decimal place", "labels": {"m": "1.5"}}
    path = folder / "suite.json"
    path.write_text(json.dumps({"name": "s", "tasks": [
        {"id": "recorded", "replay": "rec.jsonl", **common}, {"id": "bare", **common}]}))
    return path


def test_offline_a_goal_without_a_recording_is_skipped_with_one_line_saying_why(
        tmp_path: Path) -> None:
    suite, base = load_suite(two_goals(tmp_path))
    said: list[str] = []
    evaluation = Evaluation(suite, base, settings=Settings(data_dir=tmp_path / "d"),
                            live=False, echo=said.append)
    evaluation.prepare([FULL])
    assert list(evaluation.requests) == [("full", "recorded")]
    assert [line.split()[:3] for line in said] == [["full", "bare", "skipped:"]]
    assert "no model key, and no recording" in said[0] and "ANTHROPIC_API_KEY" in said[0]
    (sample,) = evaluation.not_run(FULL)
    assert sample.status == "skipped" and sample.skipped.startswith("no model key")


def test_live_with_record_each_goal_records_per_configuration_and_replay_finds_it(
        tmp_path: Path) -> None:
    suite, base = load_suite(two_goals(tmp_path))
    task = suite.tasks[1]
    kept = tmp_path / "kept"
    assert Traffic(record=kept).paths(task, NO_MEMORY, base, live=True) == (
        None, kept / "no-memory" / "bare.jsonl")
    assert (kept / "no-memory").is_dir()
    assert Traffic().paths(task, FULL, base, live=True) == (None, None)
    # offline: nothing kept for this configuration yet, and the task has no recording
    assert Traffic(replay=kept).paths(task, NO_MEMORY, base, live=False) == (None, None)
    (kept / "no-memory" / "bare.jsonl").write_text("")
    assert Traffic(replay=kept).paths(task, NO_MEMORY, base, live=False) == (
        kept / "no-memory" / "bare.jsonl", None)
    # a task's own recording is tried under every configuration
    recorded = suite.tasks[0]
    assert Traffic(replay=kept).paths(recorded, NO_MEMORY, base, live=False) == (
        base / "rec.jsonl", None)


def test_a_replay_miss_is_not_scored_and_the_report_says_why(tmp_path: Path) -> None:
    suite, _ = load_suite(two_goals(tmp_path))
    error = ("the recording /x/rec.jsonl has no answer for this request (planner); the "
             "prompt, plan or model differs from the recorded run")
    assert replay_missed("", {"status": "failed", "status_reason": error}) == MISSED
    assert replay_missed("", {"status": "completed"}) == ""
    samples = [Sample(task="recorded", level=1, configuration="full", repeat=1, passed=True),
               Sample(task="recorded", level=1, configuration="no-memory", repeat=1,
                      status="failed", skipped=MISSED)]
    (full,) = scores(suite, samples)  # no line for a configuration with nothing scored
    assert [t.task for t in full.tasks] == ["recorded"]
    text = markdown(suite, samples, repeat=1, mode="replay", started="now")
    assert "## Not scored" in text and f"`no-memory` recorded #1: {MISSED}" in text
    assert "## Failed runs" not in text
