"""``assay run --environment``: a run names its job environment; bad names never start a run.

Every refusal exits 2 before the CLI connects to Temporal (it points at a port where nothing
listens, so reaching the connection shows as exit code 3). The Python client refuses an
unknown name too, before it starts anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient, RunNotFoundError, UnknownEnvironmentError
from tests.workers.cli.test_goal_cli import nowhere, reaches_temporal, refused
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import PolicyError, build_policy
from workers.settings import Settings
from workflows.constants import run_workflow_id
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.results import ResearchInput

__all__ = ["nowhere"]  # the fixture, imported for this module's tests


@pytest.fixture
def named(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The operator defines ``tiny`` next to the shipped ``science``; returns a data file."""
    folder = nowhere / "named"
    folder.mkdir()
    (folder / "tiny.txt").write_text("alpha\n")
    monkeypatch.setenv("ASSAY_ENVIRONMENTS_DIR", str(folder))
    data = nowhere / "table.csv"
    data.write_text("x,y\n1,2\n")
    return data


def test_an_unknown_environment_is_refused_with_the_known_names(named: Path) -> None:
    refused(["run", "Is y larger than x?", "--data", str(named), "--environment", "nope"],
            "--environment 'nope': there is no environment named so; known: science, tiny")


@pytest.mark.parametrize(("name", "shown"), [
    ("../x", "'../x'"), ("x" * 10_240, "'" + "x" * 40 + "'…"), ("", "''"),
    ("Science", "'Science'"), ("sci ence", "'sci ence'"),
])
def test_hostile_environment_names_are_refused(named: Path, name: str, shown: str) -> None:
    err = refused(["run", "Is y larger than x?", "--data", str(named), "--environment", name],
                  f"--environment {shown}: not an environment name")
    assert "known: science, tiny" in err
    assert len(err) < 1000  # a 10 kB name is not echoed back


def test_a_known_environment_passes_every_check(named: Path) -> None:
    reaches_temporal(["run", "Is y larger than x?", "--data", str(named),
                      "--environment", "tiny"])


def test_a_policy_file_naming_an_unknown_environment_is_refused(named: Path) -> None:
    policy = named.parent / "policy.json"
    policy.write_text(json.dumps({"environment": "nope"}))
    refused(["run", "Is y larger than x?", "--data", str(named), "--policy", str(policy)],
            "there is no environment named so; known: science, tiny")


def test_a_plans_jobs_naming_none_take_the_runs_environment_over_the_plans(
        tmp_path: Path) -> None:
    path = tmp_path / "pending_actions.json"
    step = {"priority": "HIGH", "action": "analyse", "acceptance_criteria": ["works"]}
    path.write_text(json.dumps({"environment": "science", "decisions": [
        {"task_id": "a", **step, "job": {"code": "print(1)\n"}},
        {"task_id": "b", **step, "job": {"code": "print(2)\n", "environment": "own"}}]}))
    policy = build_policy(Settings(data_dir=tmp_path / "assay"), environment="tiny",
                          known_environments=["science", "tiny", "own"])
    req = load_plan(path, max_bytes=1_000_000, policy=policy)
    jobs = {d.task_id: d.job for d in req.plan.decisions} if req.plan else {}
    assert {tid: job.environment for tid, job in jobs.items() if job} == {"a": "tiny",
                                                                          "b": "own"}
    assert req.policy.environment == "tiny"
    plain = load_plan(path, max_bytes=1_000_000)
    assert plain.plan is not None and plain.plan.decisions[0].job is not None
    assert plain.plan.decisions[0].job.environment == "science"


def test_build_policy_refuses_what_the_cli_refuses(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "assay")
    with pytest.raises(PolicyError, match="not an environment name"):
        build_policy(settings, environment="../x")
    with pytest.raises(PolicyError, match="known: science"):
        build_policy(settings, environment="nope", known_environments=["science"])
    assert build_policy(settings).environment is None


def test_the_run_input_refuses_a_hostile_name() -> None:
    for name in ("../x", "x" * 10_240, ""):
        with pytest.raises(ValidationError, match="environment"):
            RunPolicy(environment=name)


async def test_the_client_refuses_an_unknown_environment_before_starting(
        time_env: WorkflowEnvironment, task_queue: str) -> None:
    client = AssayClient(time_env.client, task_queue=task_queue)
    req = ResearchInput(run_id="", plan_name="goal", plan_sha256="2" * 64, goal="a goal",
                        queues=Queues(), policy=RunPolicy(environment="nope"))
    with pytest.raises(UnknownEnvironmentError, match="known: science, tiny") as caught:
        await client.start_run(req, environments=["tiny", "science"])
    assert caught.value.name == "nope" and caught.value.known == ["science", "tiny"]
    with pytest.raises(RunNotFoundError):  # nothing was started
        await client.status(run_workflow_id("goal", "2" * 64))


def test_a_plan_naming_an_environment_this_machine_does_not_define_gets_a_note(
        named: Path) -> None:
    folder = named.parent / "plan"
    folder.mkdir()
    plan = {"decisions": [
        {"task_id": "a", "action": "fit", "priority": "HIGH", "acceptance_criteria": ["ok"],
          "job": {"code": "print(1)", "environment": "gpu"}},
        {"task_id": "b", "action": "plot", "priority": "HIGH", "acceptance_criteria": ["ok"],
          "job": {"code": "print(2)", "environment": "tiny"}},
        {"task_id": "c", "action": "say", "priority": "HIGH", "acceptance_criteria": ["ok"],
          "job": {"code": "print(3)"}}]}
    (folder / "pending_actions.json").write_text(json.dumps(plan))
    err = reaches_temporal(["run", str(folder / "pending_actions.json")])
    assert ("note: the plan names environment(s) gpu, which this machine does not define "
            "(known: science, tiny)") in err
    plan["decisions"][0]["job"]["environment"] = "science"  # type: ignore[index]
    (folder / "pending_actions.json").write_text(json.dumps(plan))
    assert "note: the plan names" not in reaches_temporal(
        ["run", str(folder / "pending_actions.json")])
