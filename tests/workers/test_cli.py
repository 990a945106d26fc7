"""The ``assay`` CLI: bad input is refused before anything starts; a run prints its results."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from tests.e2e_support import EXAMPLE, ROOT, isolated_settings, queue_env, wait_for, worker_env
from workers.cli import app
from workers.pools import SERVED_POOLS, run_pools

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


def test_status_of_unknown_run_is_a_clear_error(dev_env: WorkflowEnvironment,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", dev_env.client.service_client.config.target_host)
    result = runner.invoke(app, ["status", "assay-run-nope-0000000000"])
    assert result.exit_code == 1
    assert "no run 'assay-run-nope-0000000000'" in result.stderr


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, postgres_server_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[dict[str, str]]:
    """Workers in this process; returns the environment a CLI process needs to reach them."""
    settings = isolated_settings(tmp_path / "assay", task_queue)
    stop = asyncio.Event()
    running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                            database_url=postgres_server_url, stop=stop,
                                            client=dev_env.client))
    yield worker_env(dev_env.client.service_client.config.target_host, postgres_server_url,
                     settings.data_dir, **queue_env(settings))
    stop.set()
    await running


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
    assert code == 0 and out.count("\n") >= 10 and "code_exec" in out


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
    code, out, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "ada",
                               "--comment", "go ahead")
    assert code == 0, err
    assert out.strip() == "plan gate approved by ada"

    async def completed() -> bool:
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and f"run {run_id}: completed" in out

    await wait_for(completed, timeout=60, what="the approved run to complete", every=0.5)


def test_bad_policy_file_exits_2(nowhere: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"gates": {"plan": {"human": "sometimes"}}}')
    result = runner.invoke(app, ["run", str(EXAMPLE), "--policy", str(policy)])
    assert result.exit_code == 2
    assert "gates.plan.human" in result.stderr
