"""Hostile plan and policy files through the CLI: exit code 2 and a message, never a traceback.

Each file is built to break a parser (ten thousand nested brackets, bytes that are not UTF-8,
a file far over the limit, a number of thousands of digits). The CLI points at a port where
nothing listens, so input that got past intake would show as exit code 3.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.e2e import EXAMPLE
from workers.cli.main import app

runner = CliRunner()
DEPTH = 10_000
MB = 1 << 20


def deep(path: Path) -> str:
    path.write_text('{"decisions": ' + "[" * DEPTH + "]" * DEPTH + "}")
    return "nested more than 64 levels deep at line 1, column 78"


def not_utf8(path: Path) -> str:
    path.write_bytes(b'{\n  "meeting_id": "caf\xe9"}')
    return "not UTF-8 text: byte 0xe9 at line 2, column 21"


def huge(path: Path) -> str:
    with path.open("wb") as handle:  # sparse: 64 MiB that take no disk and are never read
        handle.truncate(64 * MB)
    return f"{64 * MB:,} bytes is over the"


def long_number(path: Path) -> str:
    path.write_text('{"decisions": ' + "9" * 5000 + "}")
    return "cannot be parsed (ValueError: Exceeds the limit (4300 digits)"


HOSTILE: dict[str, Callable[[Path], str]] = {
    "10,000-level nesting": deep, "invalid UTF-8": not_utf8, "64 MiB": huge,
    "5,000-digit number": long_number}


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{port}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))


def refused(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert result.exit_code == 2, result.output
    assert message in result.stderr, result.stderr
    assert result.stderr.startswith(f"error: {args[-1]}: ")
    assert "Traceback" not in result.output and "cannot reach Temporal" not in result.stderr
    # refused without reading or parsing it all: its time is in benchmarks/bench_guards.py


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_plan_file_is_refused_by_run_and_plan(nowhere: None, tmp_path: Path,
                                                       kind: str) -> None:
    plan = tmp_path / "plan.json"
    message = HOSTILE[kind](plan)
    refused(["run", str(plan)], message)
    refused(["plan", "assay-run-any-0123456789", str(plan)], message)


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_policy_file_is_refused(nowhere: None, tmp_path: Path, kind: str) -> None:
    policy = tmp_path / "policy.json"
    message = HOSTILE[kind](policy)
    refused(["run", str(EXAMPLE), "--policy", str(policy)], message)


def test_the_plan_file_limit_follows_the_payload_limit(nowhere: None, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_MAX_PLAN_BYTES", "10000")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"decisions": [], "pad": " " * 50_000}))
    refused(["run", str(plan)], "is over the 40,000-byte limit for a plan file; nothing was read")


def test_an_oversize_job_script_is_refused_unread(nowhere: None, tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    with script.open("wb") as handle:
        handle.truncate(64 * MB)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"decisions": [{
        "task_id": "1", "priority": "HIGH", "action": "x", "acceptance_criteria": ["y"],
        "job": {"entry": "job.py"}}]}))
    result = runner.invoke(app, ["run", str(plan)])
    assert result.exit_code == 2, result.output
    assert f"task 1: job entry 'job.py' is {64 * MB:,} bytes, over the" in result.stderr


def test_nesting_up_to_the_limit_is_fine_and_brackets_in_strings_do_not_count(
        nowhere: None, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    context = "[" * 60 + '"{{{{[[[["' + "]" * 60  # 64 levels in all, plus brackets in text
    plan.write_text('{"decisions": [{"task_id": "1", "priority": "HIGH", "action": "x", '
                    '"acceptance_criteria": ["y"], "context": {"deep": ' + context + "}}]}")
    result = runner.invoke(app, ["run", str(plan)])
    assert result.exit_code == 3, result.output  # past intake: it went on to connect


def test_a_recording_with_a_hostile_line_is_refused(nowhere: None, tmp_path: Path) -> None:
    recording = tmp_path / "recording.jsonl"
    recording.write_text('{"key": "k", "response": ' + "[" * DEPTH + "]" * DEPTH + "}\n")
    result = runner.invoke(app, ["run", "How do iris species differ?", "--replay",
                                 str(recording)])
    assert result.exit_code == 2, result.output
    assert f"--replay {recording}: not a recording: a line is too deeply nested" in (
        result.stderr)


def test_a_plan_whose_alternatives_cannot_run_is_refused_by_run(nowhere: None,
                                                               tmp_path: Path) -> None:
    fit = {"task_id": "fit", "priority": "HIGH", "action": "x", "acceptance_criteria": ["y"],
           "branches": [{"name": "lr-0.3", "set": {"args.lr": 0.3}}]}  # no job: the coder's
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"decisions": [fit]}))
    refused(["run", str(plan)], "task fit: branch 'lr-0.3': cannot set args.lr of task fit: "
                                "the coder writes its job when the task runs")
    sweep = [{"name": f"lr-{i}", "set": {"args.lr": i}} for i in range(2)]
    plan.write_text(json.dumps({"decisions": [
        {**fit, "job": {"code": "print(1)"}, "branches": sweep},
        {**fit, "task_id": "again", "job": {"code": "print(2)"}, "branches": sweep}]}))
    refused(["run", str(plan)], "task again: branch 'lr-0': the name is already taken")


@pytest.mark.parametrize(("args", "message"), [
    ({"x": "a\u0000b"}, "argument 'x' contains a NUL byte"),
    ({"x": "y" * 200_000}, "over the 131,071 bytes a program accepts in one argument"),
    ({f"k{i}": "y" * 100_000 for i in range(6)}, "over the 524,288-byte limit"),
])
def test_job_arguments_no_program_could_be_given_are_refused(
        nowhere: None, tmp_path: Path, args: dict[str, str], message: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"decisions": [{
        "task_id": "1", "priority": "HIGH", "action": "x", "acceptance_criteria": ["y"],
        "job": {"code": "print(1)\n", "args": args}}]}))
    refused(["run", str(plan)], message)
    branched = {"task_id": "1", "priority": "HIGH", "action": "x", "acceptance_criteria": ["y"],
                "job": {"code": "print(1)\n", "args": {"x": "1"}},
                "branches": [{"name": "b", "set": {f"args.{k}": v for k, v in args.items()}}]}
    plan.write_text(json.dumps({"decisions": [branched]}))
    refused(["run", str(plan)], message)
