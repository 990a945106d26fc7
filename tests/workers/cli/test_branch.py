"""``assay branch``: the request it builds, and what it refuses before sending anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.workers.cli.test_cli import closed_port
from workers.cli.branch import BranchOptions, branch_request
from workers.cli.fields import InputError
from workers.cli.main import app
from workflows.contracts.alternatives import HYPOTHESIS_CHARS, Metric

runner = CliRunner()


@pytest.fixture
def unreachable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point the CLI where nothing listens: a refusal must come before connecting."""
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))


def test_a_sweep_starts_one_branch_per_value_with_the_sets_in_each() -> None:
    req = branch_request(BranchOptions(start="3:execute", by="ada", sets=["args.epochs=5"],
                                       sweep="args.lr=0.001,0.01,0.1", kind="optimisation",
                                       metric="loss:minimize", select="person"))
    assert (req.from_task, req.from_phase, req.by, req.selection) == (
        "3", "execute", "ada", "person")
    assert req.metric == Metric(name="loss", direction="minimize")
    assert [(b.name, b.kind, b.set) for b in req.branches] == [
        ("lr-0.001", "optimisation", {"args.epochs": 5, "args.lr": 0.001}),
        ("lr-0.01", "optimisation", {"args.epochs": 5, "args.lr": 0.01}),
        ("lr-0.1", "optimisation", {"args.epochs": 5, "args.lr": 0.1})]


def test_one_branch_is_named_by_its_sets_or_by_the_first_free_number(tmp_path: Path) -> None:
    code = tmp_path / "job.py"
    code.write_text("print('mine')\n")
    one = branch_request(BranchOptions(start="2", by="ada", sets=["args.lr=0.5",
                                                                  "4:args.epochs=3"]))
    assert [b.name for b in one.branches] == ["lr-0.5-epochs-3"]
    bare = branch_request(BranchOptions(start="2", by="ada", code=code, hypothesis="mine"),
                          taken={"branch-1", "lr-0.5"})
    assert [(b.name, b.code, b.hypothesis) for b in bare.branches] == [
        ("branch-2", "print('mine')\n", "mine")]
    clash = branch_request(BranchOptions(start="2", by="ada", sets=["args.lr=0.5"]),
                           taken={"lr-0.5"})
    assert clash.branches[0].name == "lr-0.5-2"
    named = branch_request(BranchOptions(start="2", by="ada", name="try", sweep="args.a=x,y"))
    assert [b.name for b in named.branches] == ["try-x", "try-y"]


@pytest.mark.parametrize(("opts", "message"), [
    (BranchOptions(start="3", by="ada", sweep="args.lr=1", sets=["args.lr=2"]),
     "args.lr is both swept and set"),
    (BranchOptions(start="3", by="ada", name="main"), "names the run's own line"),
    (BranchOptions(start="3", by="ada", name="a/b", sweep="args.x=1"), "a branch name is"),
    (BranchOptions(start="3", by="ada\x1b[2J"), "--by has control characters"),
    (BranchOptions(start="3", by=""), "by: String should have at least 1 character"),
    (BranchOptions(start="3", by="ada", hypothesis="x" * (HYPOTHESIS_CHARS + 1)),
     "branches.0.hypothesis: String should have at most"),
    (BranchOptions(start="3", by="ada", hypothesis="bell\x07"), "control characters"),
    (BranchOptions(start="3", by="ada", comment="y" * 5000), "comment: String should have"),
    (BranchOptions(start="3", by="ada", kind="wild"), "branches.0.kind: Input should be"),
])
def test_contradictory_hostile_and_oversize_options_are_refused(opts: BranchOptions,
                                                                message: str) -> None:
    with pytest.raises(InputError, match=message):
        branch_request(opts)


def test_hypothesis_and_comment_may_have_several_lines() -> None:
    req = branch_request(BranchOptions(start="3", by="ada", hypothesis="a\n\tb",
                                       comment="one\ntwo"))
    assert req.branches[0].hypothesis == "a\n\tb" and req.comment == "one\ntwo"


@pytest.mark.parametrize(("args", "message"), [
    (["--from", "3:later", "--set", "args.lr=1"], "the phase is one of"),
    (["--from", "3", "--set", "lr=1"], "is no field"),
    (["--from", "3", "--sweep", "args.lr="], "has no values"),
    (["--from", "3", "--sweep", "args.lr=" + ",".join(map(str, range(21)))],
     "at most 20 branches"),
    (["--from", "3", "--name", "main"], "names the run's own line"),
    (["--from", "3", "--name", "x" * 49], "a branch name is 1 to 48"),
    (["--from", "3", "--code", "/nonexistent/job.py"], "no such file"),
    (["--from", "3", "--set", "args.x=" + "9" * 5000], "at most 1,000"),
    (["--from", "3", "--metric", "acc:up"], "maximize or minimize"),
    (["--from", "3", "--by", "eve\x00"], "control characters"),
])
def test_the_command_refuses_bad_options_with_exit_2_before_connecting(
        unreachable: None, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["branch", "assay-run-x-0000000000", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "cannot reach Temporal" not in result.stderr


def test_unknown_kind_and_selection_are_refused_by_the_command_line(unreachable: None) -> None:
    for flag, value in (("--kind", "wild"), ("--select", "random")):
        result = runner.invoke(app, ["branch", "r", "--from", "3", flag, value])
        assert result.exit_code == 2 and value in result.stderr
