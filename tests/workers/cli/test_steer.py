"""Steering and branching from the command line against a real closed run; the tree's table."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from typer.testing import CliRunner

from tests.client.test_linking import finished_run
from tests.client.test_steering import StandInRun
from tests.support.e2e import worker_env
from tests.support.waiting import wait_for
from tests.workers.cli.test_cli import cli, closed_port
from workers.cli.main import app


async def test_a_closed_run_is_branched_as_a_linked_run_and_takes_no_steering(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, req, _ = await finished_run(dev_env, task_queue, tmp_path)
    run = req.run_id
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    linked = [f"{run}.b1", f"{run}.b2"]
    try:
        code, out, err = await cli(env, "branch", run, "--from", "1:execute", "--sweep",
                                   "args.lr=0.01,0.1", "--by", "ada")
        assert code == 0, err
        assert (f"run {run} is closed, so a new run linked to it was started: {run}.b1"
                in out)
        assert f"lr-0.01  {run}.b1.branch-lr-0.01" in out and "lr-0.1 " in out
        assert f"follow them with `assay branches {run}.b1`" in out
        code, out, err = await cli(env, "branch", run, "--from", "1", "--set", "args.lr=1",
                                   "--json", "--by", "ada")
        assert code == 0, err
        assert json.loads(out) == {"run_id": linked[1], "linked_from": run, "branches": [
            {"name": "lr-1", "workflow_id": f"{linked[1]}.branch-lr-1"}]}

        async def listed() -> bool:
            found = [wf.id async for wf in dev_env.client.list_workflows(
                f'AssayParent="{run}"')]
            return sorted(found) == linked

        await wait_for(listed, timeout=30, what="the linked runs to be listed by AssayParent")
        code, _, err = await cli(env, "branch", run, "--from", "9", "--by", "ada")
        assert code == 2 and "refused: unknown task '9' (the plan's tasks: 1, 2, 3)" in err
        for action in ("pause", "resume", "cancel", "close"):
            code, _, err = await cli(env, action, run, "--by", "ada")
            assert code == 2
            assert f"refused: run {run} has finished (partial); it takes no {action} now" in err
        code, _, err = await cli(env, "close", "assay-run-nope-0000000000")
        assert code == 1 and "no run 'assay-run-nope-0000000000'" in err
    finally:
        for run_id in linked:
            await dev_env.client.get_workflow_handle(run_id).terminate("test over")


async def test_an_open_run_is_branched_and_steered_through_its_updates(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    run = f"stand-in-{uuid.uuid4().hex[:8]}"
    async with Worker(dev_env.client, task_queue=task_queue, workflows=[StandInRun]):
        handle = await dev_env.client.start_workflow(StandInRun.run, id=run,
                                                     task_queue=task_queue)
        code, out, err = await cli(env, "branch", run, "--from", "1:verify", "--sweep",
                                   "args.lr=0.1,0.2", "--by", "ada")
        assert code == 0, err
        assert out.splitlines()[0] == f"started 2 branches of run {run} from task 1 (verify)"
        assert "lr-0.1  wf-lr-0.1" in out and "lr-0.2  wf-lr-0.2" in out
        code, out, err = await cli(env, "branch", run, "--from", "1", "--set", "args.lr=0.1",
                                   "--json", "--by", "ada")  # the default name is taken
        assert code == 0, err
        assert [b["name"] for b in json.loads(out)["branches"]] == ["lr-0.1-2"]
        code, _, err = await cli(env, "branch", run, "--from", "7", "--by", "ada")
        assert code == 2 and err.strip() == "error: refused: the run has no task '7'"
        code, _, err = await cli(env, "pause", run, "--by", "eve")
        assert code == 2 and "refused: 'eve' may not steer this run; one of: ada" in err
        code, out, err = await cli(env, "pause", run, "--by", "ada", "-m", "lunch")
        assert code == 0, err
        assert out.startswith(f"run {run} paused: no new task or branch starts")
        code, out, _ = await cli(env, "close", run, "--by", "ada")
        assert code == 0 and f"run {run} closed" in out
        await handle.result()


@pytest.mark.parametrize(("args", "message"), [
    (["--by", "eve\x1b]0;pwned\x07"], "--by has control characters"),
    (["--by", "x" * 129], "invalid request: by: String should have at most 128 characters"),
    (["--comment", "c" * 4001], "String should have at most 4000 characters"),
    (["--comment", "nul\x00"], "--comment has control characters"),
])
def test_steering_refuses_hostile_or_oversize_input_before_connecting(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], message: str) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path))
    for action in ("pause", "resume", "cancel", "close"):
        result = CliRunner().invoke(app, [action, "RUN", *args])
        assert result.exit_code == 2 and message in result.stderr
        assert "cannot reach Temporal" not in result.stderr
