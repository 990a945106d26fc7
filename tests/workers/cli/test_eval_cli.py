"""``assay eval``: bad suites and ablations refused before anything starts, and a small suite
run end to end on the dev server with ``--repeat 2`` and one ablation.

The refusals point the CLI at a port where nothing listens: reaching the connection would
show as exit code 3, so exit code 2 proves nothing was started.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from tests.support.e2e import ROOT, slow_plan
from tests.support.waiting import wait_for
from workers.cli.main import app

runner = CliRunner()
PLANS = ROOT / "examples" / "eval" / "plans"


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point the CLI at a Temporal address where nothing listens; returns a scratch folder."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{port}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    monkeypatch.delenv("ASSAY_MODEL_REPLAY_PATH", raising=False)
    return tmp_path


def suite_file(folder: Path, tasks: list[dict[str, Any]], name: str = "suite.json") -> Path:
    path = folder / name
    path.write_text(json.dumps({"name": "tiny", "tasks": tasks}))
    return path


def plan_task(task_id: str, plan: str, *expect: dict[str, Any], level: int = 1
              ) -> dict[str, Any]:
    return {"id": task_id, "level": level, "topic": "statistics", "plan": str(PLANS / plan),
            "expect": list(expect)}


MEAN = {"path": "tasks.main.metrics.mean", "value": 5.843333, "abs_tol": 0.001}


async def cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run ``assay`` in a process of its own (the command runs its own event loop)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", *args, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=540)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def refused(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["eval", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "cannot reach Temporal" not in result.stderr


def test_a_bad_suite_or_ablation_is_refused_before_anything_starts(nowhere: Path) -> None:
    good = suite_file(nowhere, [plan_task("mean", "iris-describe.json", MEAN)])
    refused([str(good), "--ablate", "skills,reviews"],
            "--ablate: unknown 'reviews'; known: skills, memory, debuggers, model-review")
    no_reference = nowhere / "bare.json"
    no_reference.write_text(json.dumps({"name": "x", "tasks": [
        {"id": "mean", "level": 1, "plan": str(PLANS / "iris-describe.json")}]}))
    refused([str(no_reference)], "tasks.0 (mean): no reference answer")
    malformed = nowhere / "malformed.json"
    malformed.write_text('{"name": "x", "tasks": [}')
    refused([str(malformed)], "invalid JSON at line 1")
    refused([str(nowhere / "absent.json")], "absent.json")
    bad_plan = nowhere / "plan.json"
    bad_plan.write_text(json.dumps({"decisions": [{"task_id": "a", "action": "x"}]}))
    with_bad_plan = suite_file(nowhere, [{**plan_task("p", "x", MEAN), "plan": str(bad_plan)}],
                               name="bad-plan.json")
    refused([str(with_bad_plan)], "plan.json: invalid plan")
    result = runner.invoke(app, ["eval", str(good), "--repeat", "1"])
    assert result.exit_code == 3, result.output  # a good suite goes on to connect


def test_record_and_replay_folders_are_refused_when_they_cannot_work(nowhere: Path) -> None:
    good = suite_file(nowhere, [plan_task("mean", "iris-describe.json", MEAN)])
    refused([str(good), "--record", str(nowhere / "kept")],
            "--record keeps live model traffic, and no model key is configured")
    refused([str(good), "--record", str(nowhere / "kept"), "--replay", str(nowhere)],
            "--record and --replay exclude each other")
    refused([str(good), "--replay", str(nowhere / "absent")], "absent: not a folder")
    result = runner.invoke(app, ["eval", str(good), "--replay", str(nowhere), "--repeat", "1"])
    assert result.exit_code == 3, result.output  # a replay folder goes on to connect


def test_a_learning_curve_refuses_ablations(nowhere: Path) -> None:
    good = suite_file(nowhere, [plan_task("mean", "iris-describe.json", MEAN)])
    refused([str(good), "--curve", "--ablate", "skills"],
            "--curve runs its own two passes (learning on, then off)")
    result = runner.invoke(app, ["eval", str(good), "--curve"])
    assert result.exit_code == 3, result.output  # a curve goes on to connect


@pytest.mark.timeout(600)
async def test_a_tiny_suite_runs_twice_per_configuration_and_reports(
        served: dict[str, str], tmp_path: Path) -> None:
    suite = suite_file(tmp_path, [
        plan_task("mean", "iris-describe.json", MEAN),
        plan_task("pi", "sim-pi.json",
                  {"path": "tasks.main.metrics.estimate", "value": 3.14159, "abs_tol": 0.015},
                  level=2),
        plan_task("wrong", "sensor-iqr.json",  # a reference the run cannot meet
                  {"path": "tasks.main.metrics.outliers", "value": 40}, level=3),
    ])
    out = tmp_path / "report"
    code, stdout, stderr = await cli(served, "eval", str(suite), "--repeat", "2", "--ablate",
                                     "memory", "--out", str(out))
    assert code == 0, stderr

    samples = json.loads((out / "samples.json").read_text())["samples"]
    assert len(samples) == 3 * 2 * 2
    assert {(s["configuration"], s["task"]) for s in samples if s["passed"]} == {
        (c, t) for c in ("full", "no-memory") for t in ("mean", "pi")}
    wrong = [s for s in samples if s["task"] == "wrong"]
    assert all(s["status"] == "completed" and s["missed"] == [
        "tasks.main.metrics.outliers = 6 (want 40)"] for s in wrong), [
        (s["status"], s["missed"], s["error"]) for s in wrong]
    assert all(s["calls"] == 0 and s["seconds"] > 0 and s["run_id"] for s in samples)
    assert len({s["run_id"] for s in samples}) == 12

    tables = stdout.strip().split("\n\n")
    full = next(t for t in tables if t.startswith("full: 6 runs"))
    assert any(line.split()[:5] == ["mean", "1", "statistics", "1.00", "1.00"]
               for line in full.splitlines())
    assert any(line.split()[:5] == ["wrong", "3", "statistics", "0.00", "0.00"]
               for line in full.splitlines())
    comparison = next(t for t in tables if t.startswith("comparison")).splitlines()
    assert comparison[2].split()[:7] == ["full", "0.67", "+0.00", "0.67", "1.00", "1.00",
                                        "0.00"]
    assert comparison[3].split()[:3] == ["no-memory", "0.67", "+0.00"]

    report = (out / "report.md").read_text()
    assert "# Evaluation: tiny" in report
    assert "| full | 0.67 | +0.00 | 0.67 | 1.00 | 1.00 | 0.00 |" in report
    assert "## no-memory" in report and "## Failed runs" in report
    assert "`no-memory` wrong #2" in report


@pytest.mark.timeout(300)
async def test_a_run_past_the_timeout_fails_its_sample_and_is_cancelled(
        served: dict[str, str], dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    plan = slow_plan(tmp_path, 90)
    suite = suite_file(tmp_path, [{"id": "slow", "level": 1, "plan": str(plan),
                                   "expect": [{"path": "tasks.slow.metrics.slept",
                                               "value": 90}]}])
    code, stdout, stderr = await cli(served, "eval", str(suite), "--repeat", "1",
                                     "--timeout", "10", "--out", str(tmp_path / "out"))
    assert code == 0, stderr
    (sample,) = json.loads((tmp_path / "out" / "samples.json").read_text())["samples"]
    assert not sample["passed"] and sample["error"] == "no result within 10 s; cancelled"
    assert any(line.split()[:4] == ["slow", "1", "0.00", "0.00"] for line in stdout.splitlines())
    handle = dev_env.client.get_workflow_handle(sample["run_id"])

    async def cancelled() -> bool:
        return (await handle.describe()).status == WorkflowExecutionStatus.CANCELED

    await wait_for(cancelled, timeout=120, what="the run past its timeout to be cancelled")
