"""``assay approve``'s decisions: choose at a branch gate, modify at a task's gate, in a branch."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from client.assay import gate_workflow_id
from tests.workers.cli.test_cli import closed_port
from workers.cli.gates import DecisionOptions, GateName, gate_decision
from workers.cli.main import app

runner = CliRunner()


def test_choose_at_the_branch_gate_is_a_run_gate_approval_with_a_choice() -> None:
    decision = gate_decision(DecisionOptions(gate=GateName.BRANCH, by="ada", choose="lr-0.1"))
    assert decision.model_dump(exclude_defaults=True) == {
        "gate": "branch", "decision": "approve", "choice": "lr-0.1", "by": "ada",
        "channel": "cli"}
    assert gate_workflow_id("RUN", decision) == "RUN"


def test_modify_at_a_task_gate_carries_the_changes_and_a_branch_routes_it() -> None:
    decision = gate_decision(DecisionOptions(
        gate=GateName.STEP, by="ada", task="3", modify=True,
        sets=["args.lr=0.1", "resources.timeout_s=600"]))
    assert decision.model_dump(exclude_defaults=True) == {
        "gate": "step", "task_id": "3", "decision": "modify", "by": "ada",
        "set": {"args.lr": 0.1, "resources.timeout_s": 600}, "channel": "cli"}
    assert gate_workflow_id("RUN", decision) == "RUN.task-3"
    inside = gate_decision(DecisionOptions(gate=GateName.ERROR, by="ada", task="3",
                                           branch="lr-0.1", reject=True))
    assert (inside.decision, inside.branch) == ("reject", "lr-0.1")
    assert gate_workflow_id("RUN", inside) == "RUN.branch-lr-0.1.task-3"


@pytest.mark.parametrize(("opts", "message"), [
    (DecisionOptions(gate=GateName.BRANCH, by="ada"), "takes --choose NAME"),
    (DecisionOptions(gate=GateName.BRANCH, by="ada", choose="a", reject=True),
     "takes --choose NAME"),
    (DecisionOptions(gate=GateName.PLAN, by="ada", choose="a"), "--choose is for the branch"),
    (DecisionOptions(gate=GateName.PLAN, by="ada", modify=True, sets=["args.a=1"]),
     "--modify is for the step and error gates"),
    (DecisionOptions(gate=GateName.STEP, by="ada", modify=True, sets=["args.a=1"]),
     "--modify is for the step and error gates of a task"),
    (DecisionOptions(gate=GateName.STEP, by="ada", task="3", modify=True),
     "--modify needs at least one --set"),
    (DecisionOptions(gate=GateName.STEP, by="ada", task="3", sets=["args.a=1"]),
     "--set needs --modify"),
    (DecisionOptions(gate=GateName.STEP, by="ada", task="3", modify=True, reject=True,
                     sets=["args.a=1"]), "contradict"),
    (DecisionOptions(gate=GateName.STEP, by="ada", branch="b"), "give --task too"),
    (DecisionOptions(gate=GateName.STEP, by="ada", task="3", modify=True,
                     sets=["job.code=x"]), "is no field"),
    (DecisionOptions(gate=GateName.BRANCH, by="ada", choose="x" * 49), "at most 48"),
    (DecisionOptions(gate=GateName.BRANCH, by="ada", choose="a\x1bb"), "control"),
    (DecisionOptions(gate=GateName.PLAN, by="a\nb"), "--by has control"),
])
def test_options_that_do_not_fit_together_or_are_hostile_are_refused(
        opts: DecisionOptions, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gate_decision(opts)


def test_the_command_refuses_them_with_exit_2_before_connecting(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path))
    result = runner.invoke(app, ["approve", "r", "--gate", "step", "--task", "3", "--modify",
                                 "--set", "args.lr"])
    assert result.exit_code == 2 and "has no '='" in result.stderr
    result = runner.invoke(app, ["approve", "r", "--gate", "branch"])
    assert result.exit_code == 2 and "takes --choose NAME" in result.stderr
    assert "cannot reach Temporal" not in result.stderr
    result = runner.invoke(app, ["approve", "r", "--gate", "branch", "--choose", "x" * 49])
    assert result.exit_code == 2
    assert "invalid decision: choice: String should have at most 48 characters" in result.stderr
