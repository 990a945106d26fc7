"""``assay checkpoint``, ``assay checkpoints`` and ``assay branch --from-checkpoint`` against
a real run waiting at a task's gate; the names the CLI refuses before sending anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.branches import approve_step
from tests.support.e2e import worker_env
from tests.workers.cli.test_cli import cli
from tests.workflows.common.test_gates import start, task_gate_waiting
from tests.workflows.harness import Harness, task
from workers.cli.checkpoints import checkpoint_request
from workers.cli.fields import InputError
from workflows.constants import task_workflow_id

PLAN = [task("1"), task("2", deps=["1"], score=0.5), task("3", deps=["2"])]


@pytest.mark.parametrize(("name", "said"), [
    ("bad name", "a checkpoint name is 1 to 64"), ("\x1b[31mred", "control characters"),
    ("n" * 65, "a checkpoint name is 1 to 64"), ("error:2:1", "':' marks the run's own"),
    ("", "a checkpoint name is 1 to 64")])
def test_a_malformed_or_hostile_name_is_refused_before_it_is_sent(name: str, said: str) -> None:
    with pytest.raises(InputError) as caught:
        checkpoint_request(name, "ada", "", None)
    assert said in str(caught.value)


def test_a_request_names_the_cli_and_its_branch_point() -> None:
    req = checkpoint_request("before-refit", "ada", "look", "2:execute")
    assert (req.name, req.by, req.comment, req.task, req.phase, req.channel) == (
        "before-refit", "ada", "look", "2", "execute", "cli")
    with pytest.raises(InputError, match="--at"):
        checkpoint_request("x", "ada", "", "2:later")


async def test_a_running_run_is_checkpointed_listed_and_branched_from_the_checkpoint(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     tmp_path / "assay")
    harness = Harness(dev_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, PLAN, gates={"step": {"human": True}},
                          branching={"hold_open": True})
        try:
            await approve_step(dev_env, run, "1")
            await task_gate_waiting(dev_env.client.get_workflow_handle(
                task_workflow_id(run.id, "2")), "step")
            code, out, err = await cli(env, "checkpoint", run.id, "--name", "before-refit",
                                       "--by", "ada", "-m", "refit next")
            assert code == 0, err
            assert out.startswith(f"checkpoint before-refit of run {run.id} named by ada: 1 "
                                  "finished task, 1 artifact; a branch starts at task 2 "
                                  "(planned)"), out
            code, _, err = await cli(env, "checkpoint", run.id, "--name", "before-refit")
            assert code == 2 and "refused: checkpoint 'before-refit' is already taken" in err
            code, _, err = await cli(env, "checkpoint", run.id, "--name", "bad name")
            assert code == 2 and "a checkpoint name is 1 to 64" in err
            code, out, err = await cli(env, "checkpoints", run.id)
            assert code == 0, err
            lines = out.splitlines()
            assert lines[0].split() == ["NAME", "KIND", "BY", "AT", "FROM", "FINISHED", "TASKS"]
            assert lines[1].split()[:3] == ["approval:step:1", "approval", "ada"]
            assert lines[2].split()[:3] == ["before-refit", "manual", "ada"]
            assert "2:planned" in lines[2] and "1 completed" in lines[2]
            code, _, err = await cli(env, "branch", run.id, "--from-checkpoint", "nowhere",
                                     "--by", "ada")
            assert code == 2 and "no checkpoint 'nowhere'" in err
            assert "approval:step:1, before-refit" in err
            code, _, err = await cli(env, "branch", run.id, "--by", "ada")
            assert code == 2 and "--from TASK[:phase] or --from-checkpoint NAME" in err
            code, out, err = await cli(env, "branch", run.id, "--from-checkpoint",
                                       "before-refit", "--set", "args.score=0.9", "--name",
                                       "refit", "--by", "ada")
            assert code == 0, err
            assert out.splitlines()[0] == f"started 1 branch of run {run.id} from task 2 (planned)"
        finally:
            await run.terminate("test over")
