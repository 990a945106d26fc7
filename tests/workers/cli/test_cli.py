"""The ``assay`` CLI: bad input is refused before anything starts; a run prints its results."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from client.assay import waiting_for_plan
from tests.support.e2e import EXAMPLE, ROOT
from tests.support.waiting import wait_for
from workers.cli.gates import GateName
from workers.cli.main import app
from workers.cli.show import outcome_lines, summary_lines
from workflows.contracts.results import ResearchResult, RunProgress, RunReport
from workflows.contracts.roles import RunAnswer
from workflows.contracts.spend import ModelSpend, Usage

runner = CliRunner()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Point the CLI at a Temporal address where nothing listens."""
    address = f"127.0.0.1:{closed_port()}"
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", address)
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    return address


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such plan file"),
    ("{", "invalid JSON at line 1"),
    ('{"decisions": [{"task_id": 1, "priority": "HIGH", "action": "x"}]}',
     "task 1 (decisions[0]), field acceptance_criteria: Field required"),
    ('{"decisions": [{"task_id": 1, "priority": "HIGH", "action": "x", '
     '"acceptance_criteria": ["y"], "dependencies": [1]}]}', "task 1: depends on itself"),
])
def test_bad_plan_exits_2_and_starts_nothing(nowhere: str, tmp_path: Path, content: str | None,
                                             message: str) -> None:
    plan = tmp_path / "plan.json"
    if content is not None:
        plan.write_text(content)
    result = runner.invoke(app, ["run", str(plan)])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "cannot reach Temporal" not in result.stderr  # refused before connecting


def test_unreachable_temporal_is_explained(nowhere: str) -> None:
    result = runner.invoke(app, ["run", str(EXAMPLE)])
    assert result.exit_code == 3
    assert "cannot reach Temporal" in result.stderr and "assay up" in result.stderr


def test_report_reads_the_report_file_when_temporal_is_down(nowhere: str,
                                                            tmp_path: Path) -> None:
    when = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    written = RunReport(run_id="assay-run-p-0123456789", plan_name="p", plan_sha256="0" * 64,
                        status="completed", timestamp="20261122_120000", started_at=when,
                        finished_at=when, tasks=[])
    folder = tmp_path / "assay" / "runs" / written.run_id
    folder.mkdir(parents=True)
    (folder / "execution_results_20261122_120000.json").write_text(written.model_dump_json())
    result = runner.invoke(app, ["report", written.run_id])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# Execution summary")
    assert "Temporal cannot be reached; showing the report file" in result.stderr
    result = runner.invoke(app, ["report", written.run_id, "--json"])
    assert result.exit_code == 0 and RunReport.model_validate_json(result.stdout) == written
    result = runner.invoke(app, ["report", "assay-run-none-0123456789"])  # no file: as before
    assert result.exit_code == 3 and "cannot reach Temporal" in result.stderr


def test_human_gate_help_lists_every_gate_it_accepts() -> None:
    shown = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).stdout
    text = " ".join(re.sub(r"[\u2500-\u257f]", " ", shown).split())  # without the box
    assert "Make a gate (plan, step, error, result, branch) wait for a person" in text
    assert "a study's cycle gate is set by `assay study`" in text
    assert {g.value for g in GateName} <= set(re.findall(r"\w+", text))


def test_status_of_unknown_run_is_a_clear_error(dev_env: WorkflowEnvironment,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", dev_env.client.service_client.config.target_host)
    result = runner.invoke(app, ["status", "assay-run-nope-0000000000"])
    assert result.exit_code == 1
    assert "no run 'assay-run-nope-0000000000'" in result.stderr


async def cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", *args, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_run_wait_json_prints_results_and_report_renders(served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", str(EXAMPLE), "--wait", "--json", "--again")
    assert code == 0, err
    results = json.loads(out)
    assert results["status"] == "completed"
    for task in results["tasks"]:
        assert {"task_id", "status", "status_reason", "artifacts", "provenance"} <= task.keys()
    assert "task 4: completed" in err  # progress lines while waiting
    code, out, _ = await cli(served, "report", results["run_id"])
    assert code == 0 and out.startswith("# Execution summary")
    code, out, _ = await cli(served, "status", results["run_id"])
    assert code == 0 and "completed (phase done)" in out
    code, out, _ = await cli(served, "watch", results["run_id"])
    assert code == 0 and out.count("\n") >= 10 and "job succeeded in" in out
    code, out, _ = await cli(served, "runs")
    listed = [line.split() for line in out.splitlines()]
    assert code == 0 and [results["run_id"], "completed"] in [row[:2] for row in listed]
    code, _, err = await cli(served, "run", str(EXAMPLE))  # the plan's first run exists
    assert code == 1 and "pass --again to start another run of it" in err
    assert "again=True" not in err and "already exists: assay-run-iris" in err


async def test_gates_are_listed_and_decided_from_the_cli(served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", str(EXAMPLE), "--again", "--human-gate", "plan",
                               "--approver", "ada")
    assert code == 0, err
    run_id = out.strip()

    async def listed() -> bool:
        code, out, _ = await cli(served, "gates")
        return code == 0 and f"{run_id} --gate plan" in out

    await wait_for(listed, timeout=30, what="the plan gate to be listed", every=0.5)
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "eve")
    assert code == 1 and "refused: " in err and "'eve' may not decide" in err
    code, _, err = await cli(served, "approve", run_id, "--gate", "launch", "--by", "ada")
    assert code == 2 and "launch" in err
    code, _, err = await cli(served, "plan", run_id, str(EXAMPLE), "--by", "ada")
    assert code == 2 and "refused: " in err  # a plan run at its plan gate takes no plan
    code, _, err = await cli(served, "approve", run_id, "--gate", "step", "--task", "1",
                             "--by", "ada")
    assert code == 1 and f"run {run_id} has no task '1' running: it has not started" in err
    code, out, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "ada",
                               "--comment", "go ahead")
    assert code == 0, err
    assert out.startswith("plan gate approved by ada via cli, ")  # then when, UTC
    assert out.strip().endswith(' UTC: "go ahead"')

    async def completed() -> bool:
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and f"run {run_id}: completed" in out

    await wait_for(completed, timeout=60, what="the approved run to complete", every=0.5)
    code, out, _ = await cli(served, "status", run_id)  # who decided, how, when, and why
    assert "  plan gate approved by ada via cli, " in out and ' UTC: "go ahead"' in out
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "ada")
    assert code == 1 and "None" not in err
    assert f"refused: run {run_id} has finished (completed); its gates are closed" in err
    code, _, err = await cli(served, "approve", run_id, "--gate", "step", "--task", "1",
                             "--by", "ada")
    assert code == 1
    assert f"refused: run {run_id} has finished (completed); its gates are closed" in err


async def test_status_answers_on_a_run_with_refused_decisions(
        served: dict[str, str], dev_env: WorkflowEnvironment) -> None:
    """Three 900 KB ``by`` fields kept whole once made every query of the run fail."""
    code, out, err = await cli(served, "run", str(EXAMPLE), "--again", "--human-gate", "plan",
                               "--approver", "ada")
    assert code == 0, err
    run_id = out.strip()

    async def listed() -> bool:
        code, out, _ = await cli(served, "gates")
        return code == 0 and f"{run_id} --gate plan" in out

    await wait_for(listed, timeout=30, what="the plan gate to be listed", every=0.5)
    handle = dev_env.client.get_workflow_handle(run_id)
    for _ in range(3):
        await handle.signal("approve", {"gate": "plan", "decision": "approve",
                                        "by": "x" * 900_000})
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "eve")
    assert code == 1 and "'eve' may not decide" in err
    assert f"one of: ada: `assay approve {run_id} --gate plan --by ada`" in err
    code, out, err = await cli(served, "status", run_id)
    assert code == 0, err
    assert "waiting at the plan gate since" in out and "4 decisions refused" in out
    assert "  refused (4 latest): eve: 'eve' may not decide the plan gate" in out
    code, out, err = await cli(served, "gates")
    assert code == 0 and f"{run_id} --gate plan  (waiting since " in out, err
    assert f", 4 refused (assay status {run_id}))" in out
    code, out, err = await cli(served, "status", run_id, "--json")
    assert code == 0 and json.loads(out)["waiting"]["refused_count"] == 4, err
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "ada")
    assert code == 0, err

    async def completed() -> bool:
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and f"run {run_id}: completed" in out

    await wait_for(completed, timeout=60, what="the approved run to complete", every=0.5)


async def test_a_goal_with_no_model_ends_deferred_and_says_why(served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", "Does sepal length differ between species?",
                               "--wait", "--again")
    assert code == 7, err  # a deferred run: its own exit code (docs/reference/exit-codes.md)
    assert "note: no model is configured" in err
    lines = out.splitlines()
    assert lines[0].endswith(": deferred")
    assert lines[1].startswith("  reason: ") and "model" in lines[1]
    assert lines[2] == "  goal: Does sepal length differ between species?"
    run_id = lines[0].split()[1].rstrip(":")
    code, out, _ = await cli(served, "runs")
    assert code == 0 and any(line.split()[:2] == [run_id, "deferred"]
                             for line in out.splitlines())
    code, out, _ = await cli(served, "report", run_id)
    assert code == 0 and "## Goal" in out and "**deferred**" in out
    code, out, _ = await cli(served, "status", run_id)
    assert code == 0 and out.startswith(f"run {run_id}: deferred (phase done)\n  started ")
    assert "; ended " in out.splitlines()[1] and out.splitlines()[2].startswith("  reason: ")


async def test_a_goal_run_waits_for_a_plan_from_the_cli(served: dict[str, str],
                                                        tmp_path: Path) -> None:
    code, out, err = await cli(served, "run", "How do iris species differ?", "--again",
                               "--no-model", "wait")
    assert code == 0, err
    run_id = out.strip()

    async def waiting() -> bool:
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and f"waiting for a plan: assay plan {run_id}" in out

    await wait_for(waiting, timeout=30, what="the goal run to wait for a plan", every=0.5)
    code, out, _ = await cli(served, "status", run_id)
    assert code == 0 and "  goal: How do iris species differ?" in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"decisions": []}')
    code, _, err = await cli(served, "plan", run_id, str(bad))
    assert code == 2 and "invalid plan" in err
    code, out, err = await cli(served, "plan", run_id, str(EXAMPLE), "--by", "ada")
    assert code == 0, err
    assert out.strip() == f"plan iris-morphology-cycle1 accepted by {run_id}: 4 tasks"
    code, _, err = await cli(served, "plan", run_id, str(EXAMPLE))
    assert code == 2 and "refused: " in err and "not waiting for a plan" in err

    async def completed() -> bool:
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and f"run {run_id}: completed" in out

    await wait_for(completed, timeout=90, what="the planned goal run to complete", every=0.5)


def test_bad_policy_file_exits_2(nowhere: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"gates": {"plan": {"human": "sometimes"}}}')
    result = runner.invoke(app, ["run", str(EXAMPLE), "--policy", str(policy)])
    assert result.exit_code == 2
    assert "gates.plan.human" in result.stderr


def test_a_bad_tiering_exits_2_naming_the_choices(nowhere: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(EXAMPLE), "--tiering", "medium"],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "'medium' is not one of 'auto', 'light', 'full'" in result.stderr
    policy = tmp_path / "policy.json"
    policy.write_text('{"tiering": "medium"}')
    result = runner.invoke(app, ["run", str(EXAMPLE), "--policy", str(policy)])
    assert result.exit_code == 2
    assert "tiering" in result.stderr and "'auto', 'light' or 'full'" in result.stderr


def finished(**extra: object) -> ResearchResult:
    when = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    return ResearchResult.model_validate({
        "run_id": "assay-run-goal-x-0123456789", "plan_name": "goal-x", "plan_sha256": "0" * 64,
        "status": "completed", "timestamp": "20261122_120000", "started_at": when,
        "finished_at": when, "tasks": [], **extra})


def test_outcome_of_a_deferred_goal_run_says_why() -> None:
    result = finished(status="deferred", goal="Does sepal length\ndiffer? " + "x" * 300,
                      status_reason="no model is configured and no plan was given")
    lines = outcome_lines(result, "http://127.0.0.1:8233/namespaces/default")
    assert lines[0] == "run assay-run-goal-x-0123456789: deferred"
    assert lines[1] == "  reason: no model is configured and no plan was given"
    assert lines[2].startswith("  goal: Does sepal length differ? xxx")
    assert len(lines[2]) == len("  goal: ") + 200 and lines[2].endswith("…")
    assert not any(line.startswith(("  answer:", "  model:")) for line in lines)
    assert lines[-1].endswith("/workflows/assay-run-goal-x-0123456789")


def test_outcome_shows_the_answer_and_model_totals() -> None:
    spend = ModelSpend(calls=3, usage=Usage(input_tokens=1200, output_tokens=300,
                                            cache_creation_input_tokens=50,
                                            cache_read_input_tokens=900, cost_usd=0.0123))
    lines = summary_lines(finished(goal="g", answer=RunAnswer(answer="Yes, by 0.9 cm."),
                                   model=spend))
    assert "  answer: Yes, by 0.9 cm." in lines
    assert ("  model: 3 model calls, 1,200 input / 300 output / 50 cache-write / "
            "900 cache-read tokens, $0.0123") in lines


def test_a_run_waiting_for_a_plan_is_recognised() -> None:
    waiting = RunProgress(run_id="r", phase="plan", status="waiting")
    assert waiting_for_plan(waiting)
    assert not waiting_for_plan(waiting.model_copy(update={"order": ["1"]}))
    assert not waiting_for_plan(waiting.model_copy(update={"status": "running"}))


def test_report_archive_packs_the_folder_and_prints_a_path_that_verifies(
        nowhere: str, tmp_path: Path) -> None:
    from activities.reports.archive import verify_archive

    when = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    written = RunReport(run_id="assay-run-p-0123456789", plan_name="p", plan_sha256="0" * 64,
                        status="completed", timestamp="20261122_120000", started_at=when,
                        finished_at=when, tasks=[])
    folder = tmp_path / "assay" / "runs" / written.run_id
    (folder / "tasks").mkdir(parents=True)
    (folder / "execution_results_20261122_120000.json").write_text(written.model_dump_json())
    (folder / "tasks" / "1.json").write_text("{}")
    result = runner.invoke(app, ["report", written.run_id, "--archive"])
    assert result.exit_code == 0, result.stderr
    packed = Path(result.stdout.strip())
    assert packed == folder.parent / f"{written.run_id}_report_20261122_120000.tar.gz"
    assert verify_archive(packed) == 2
    (folder / "link").symlink_to(folder / "tasks" / "1.json")
    result = runner.invoke(app, ["report", written.run_id, "--archive"])
    assert result.exit_code != 0 and "is a link" in result.stderr
