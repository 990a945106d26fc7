"""Goal runs from the command line: goals, data, agent options and ``assay plan``.

Every malformed or hostile input is refused with exit code 2 and a message naming the
problem, before the CLI ever connects to Temporal (it points at a port where nothing listens,
so reaching the connection would show as exit code 3).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from activities.llm.recording import recorded_path
from tests.support.e2e import EXAMPLE
from workers.cli.main import app
from workers.cli.run import build_request
from workers.intake.recordings import recording_name, recordings_folder
from workers.intake.runpolicy import AgentFlags, PolicyError, build_policy
from workers.settings import Settings
from workflows.contracts.policy import RunPolicy

runner = CliRunner()
RECORDING = '{"key": "k1", "response": {"content": []}, "v": 1}\n'


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point the CLI at a Temporal address where nothing listens; returns a scratch folder."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{port}")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    monkeypatch.delenv("ASSAY_MODEL_REPLAY_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(args: list[str], message: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "cannot reach Temporal" not in result.stderr  # refused before connecting
    assert "started" not in result.stderr
    return result.stderr


def reaches_temporal(args: list[str]) -> str:
    """Input that passes every check goes on to connect (and finds nothing listening)."""
    result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    assert "cannot reach Temporal" in result.stderr
    return result.stderr


@pytest.mark.parametrize(("goal", "message"), [
    ("", "the research goal is empty"),
    ("   \n  ", "the research goal is empty"),
    ("g" * 8001, "8,001 characters, over the 8,000-character limit"),
    ("compare\x07species", "a control character (U+0007) at character 8"),
    ("compare\x1b]0;pwned\x07", "a control character (U+001B)"),
    ("rm \u202e-rf", "a bidirectional-text control (U+202E)"),
])
def test_bad_goals_exit_2(nowhere: Path, goal: str, message: str) -> None:
    refused(["run", goal], message)


def test_a_directory_without_a_plan_file_is_neither_a_plan_nor_a_goal(nowhere: Path) -> None:
    (nowhere / "study").mkdir()
    refused(["run", "study"], "study: is a directory with no plan file in it (one of "
                              "plan.json or pending_actions.json)")


def test_a_folder_runs_its_plan_json_else_its_pending_actions_json(nowhere: Path) -> None:
    settings = Settings()
    folder = nowhere / "iris"
    shutil.copytree(EXAMPLE.parent, folder)
    (folder / "plan.json").rename(folder / "pending_actions.json")  # the older name
    older = build_request(str(folder), [], settings, RunPolicy())
    assert older == build_request(str(folder / "pending_actions.json"), [], settings,
                                  RunPolicy())
    plan = json.loads(EXAMPLE.read_text())
    plan.pop("meeting_id", None)
    plan["decisions"] = plan["decisions"][:1]
    (folder / "plan.json").write_text(json.dumps(plan))
    newer = build_request(str(folder), [], settings, RunPolicy())
    assert newer.plan is not None and len(newer.plan.decisions) == 1
    assert newer.plan_name == "iris"  # named after its folder, as pending_actions.json is
    refused(["run", str(folder), "--data", str(EXAMPLE)], "--data goes with a goal in words")


def test_bad_data_files_exit_2(nowhere: Path) -> None:
    (nowhere / "a").mkdir()
    (nowhere / "b").mkdir()
    (nowhere / "a" / "x.csv").write_text("1\n")
    (nowhere / "b" / "x.csv").write_text("2\n")
    with (nowhere / "big.csv").open("wb") as handle:
        handle.truncate(50_000_001)
    goal = "does x differ?"
    refused(["run", goal, "--data", "missing.csv"], "--data missing.csv: no such file")
    refused(["run", goal, "--data", "a"], "--data a: is a directory")
    refused(["run", goal, "--data", "a/x.csv", "--data", "b/x.csv"],
            "another data file is also named 'x.csv'")
    refused(["run", goal, "--data", "big.csv"], "over the 50,000,000-byte limit")


def test_data_with_a_plan_file_exits_2(nowhere: Path) -> None:
    (nowhere / "x.csv").write_text("1\n")
    refused(["run", str(EXAMPLE), "--data", "x.csv"], "--data goes with a goal in words")


def test_an_answer_format_goes_with_a_goal_and_names_a_field(nowhere: Path) -> None:
    refused(["run", str(EXAMPLE), "--answer-format", "@x[x]"],
            "--answer-format goes with a goal in words")
    refused(["run", "how big is x?", "--answer-format", "a number"],
            "--answer-format: the answer format 'a number' names no field")
    req = build_request("how big is x?", [], Settings(), RunPolicy(), answer_format="@x[x]")
    assert (req.answer_format, req.goal) == ("@x[x]", "how big is x?\n\nAnswer format: @x[x]")


def test_a_valid_goal_with_data_passes_every_check(nowhere: Path) -> None:
    (nowhere / "iris.csv").write_text("sepal_length,species\n5.1,setosa\n")
    err = reaches_temporal(["run", "Does sepal length differ between species?",
                            "--data", "iris.csv", "--no-model", "wait"])
    assert "no model is configured" in err
    assert "wait for a person's plan" in err and "assay plan RUN PLAN.json" in err


def test_a_goal_without_a_model_says_it_will_be_deferred(nowhere: Path) -> None:
    err = reaches_temporal(["run", "Does sepal length differ?", "--no-agents"])
    assert "switched off (--no-agents)" in err and "end `deferred`" in err
    assert "unless a skill in the library matches the goal" in err  # true when printed


def test_a_plan_run_gets_no_model_note(nowhere: Path) -> None:
    assert "note:" not in reaches_temporal(["run", str(EXAMPLE)])


def write_recording(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_recording_options_are_checked(nowhere: Path) -> None:
    goal = "does x differ?"
    good = write_recording(nowhere / "good.jsonl", RECORDING)
    write_recording(nowhere / "cut.jsonl", RECORDING + '{"key": "k2", "resp')
    write_recording(nowhere / "junk.jsonl", "[1, 2]\n")
    write_recording(nowhere / "empty.jsonl", "")
    write_recording(nowhere / "binary.jsonl", b"\xff\xfe\x00\x01")
    refused(["run", goal, "--record", "r.jsonl", "--replay", str(good)],
            "--record and --replay exclude each other")
    refused(["run", goal, "--replay", "none.jsonl"], "does not exist")
    refused(["run", goal, "--replay", "."], "is a directory")
    refused(["run", goal, "--replay", "cut.jsonl"],
            "is corrupt at line 2: Unterminated string")
    assert "the line is cut off" in refused(["run", goal, "--replay", "cut.jsonl"], "corrupt")
    refused(["run", goal, "--replay", "junk.jsonl"], "corrupt at line 1: not an exchange")
    refused(["run", goal, "--replay", "empty.jsonl"], "holds no exchanges")
    refused(["run", goal, "--replay", "binary.jsonl"], "not UTF-8 text")
    refused(["run", goal, "--record", "no/such/folder/r.jsonl"], "does not exist")
    refused(["run", goal, "--record", "."], "is a directory; name a file to record into")
    hostile = {"escape": {"mode": "record", "name": "../../etc/x"},
               "nameless": {"mode": "record"}, "digestless": {"mode": "replay"},
               "hidden": {"mode": "record", "name": ".x"}}
    for label, recording in hostile.items():
        (nowhere / f"{label}.json").write_text(json.dumps({"agents": {"recording": recording}}))
    refused(["run", goal, "--policy", "escape.json"], "is not a plain file name")
    refused(["run", goal, "--policy", "hidden.json"], "is not a plain file name")
    refused(["run", goal, "--policy", "nameless.json"], "a record names its recording")
    refused(["run", goal, "--policy", "digestless.json"], "a replay names its recording's")
    assert not (nowhere.parent.parent / "etc").exists()
    err = reaches_temporal(["run", goal, "--replay", str(good)])
    assert "note:" not in err  # a replay is a model: the goal can be planned


@pytest.mark.parametrize(("args", "message"), [
    (["--budget-tokens", "-1"], "Invalid value for '--budget-tokens'"),
    (["--budget-tokens", "lots"], "Invalid value for '--budget-tokens'"),
    (["--budget-usd", "-0.01"], "Invalid value for '--budget-usd'"),
    (["--budget-usd", "nan"], "Invalid value for '--budget-usd'"),
    (["--budget-usd", "inf"], "is not a number of dollars"),
    (["--no-model", "maybe"], "Invalid value for '--no-model'"),
    (["--plan-review-rounds", "6"], "Invalid value for '--plan-review-rounds'"),
    (["--plan-review-rounds", "-1"], "Invalid value for '--plan-review-rounds'"),
])
def test_bad_agent_options_exit_2(nowhere: Path, args: list[str], message: str) -> None:
    refused(["run", "does x differ?", *args], message)


def test_bad_agents_policy_file_exits_2(nowhere: Path) -> None:
    policy = nowhere / "policy.json"
    policy.write_text(json.dumps({"agents": {"budget_usd": -3}}))
    refused(["run", "does x differ?", "--policy", str(policy)], "agents.budget_usd")
    policy.write_text(json.dumps({"agents": {"api_key": "sk-nope"}}))
    refused(["run", "does x differ?", "--policy", str(policy)], "agents.api_key")
    policy.write_text('{"agents": {"budget_usd": Infinity}}')
    refused(["run", "does x differ?", "--policy", str(policy)], "not a number of dollars")


def settings(**values: object) -> Settings:
    return Settings.model_validate(values)


def test_agents_are_enabled_by_a_key_or_a_replay_and_never_hold_the_key(tmp_path: Path) -> None:
    key = "sk-ant-test-secret"
    assert not build_policy(settings()).agents.enabled
    assert not build_policy(settings(anthropic_api_key=SecretStr("  "))).agents.enabled
    with_key = build_policy(settings(anthropic_api_key=SecretStr(key)))
    assert with_key.agents.enabled
    assert key not in with_key.model_dump_json()
    assert build_policy(settings(model_replay_path=tmp_path / "r.jsonl")).agents.enabled
    off = build_policy(settings(anthropic_api_key=SecretStr(key)),
                       agents=AgentFlags(enabled=False))
    assert not off.agents.enabled
    replay = write_recording(tmp_path / "r.jsonl", RECORDING)
    local = settings(data_dir=tmp_path / "data")
    replayed = build_policy(local, agents=AgentFlags(replay=replay))
    assert replayed.agents.enabled
    assert replayed.agents.recording is not None
    digest = hashlib.sha256(replay.read_bytes()).hexdigest()  # put in the store for agents
    assert replayed.agents.recording.model_dump() == {"mode": "replay", "name": None,
                                                      "path": None, "sha256": digest}
    with local.artifact_store().open(digest) as stored:
        assert stored.read() == replay.read_bytes()
    assert not build_policy(settings(), agents=AgentFlags(replay=replay,
                                                          enabled=False)).agents.enabled


def test_agent_flags_override_the_policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               ) -> None:
    monkeypatch.chdir(tmp_path)
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps({"agents": {"budget_tokens": 10, "no_model": "wait",
                                                  "recording": {"mode": "record",
                                                                "path": "rec.jsonl"}}}))
    from_file = build_policy(settings(), policy_file=policy_file).agents
    assert (from_file.budget_tokens, from_file.no_model) == (10, "wait")
    assert from_file.recording is not None and from_file.recording.path is None
    name = recording_name(tmp_path / "rec.jsonl")  # of the absolute path
    assert from_file.recording.name == name
    assert (tmp_path / "rec.jsonl").readlink() == recorded_path(recordings_folder(settings()),
                                                                name)
    flags = AgentFlags(budget_tokens=500, budget_usd=1.5, no_model="defer", model_review=False,
                       debuggers=False, plan_review_rounds=0)
    agents = build_policy(settings(), policy_file=policy_file, agents=flags).agents
    assert (agents.budget_tokens, agents.budget_usd, agents.no_model) == (500, 1.5, "defer")
    assert (agents.model_review, agents.debuggers, agents.plan_review_rounds) == (False, False, 0)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_record_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    with pytest.raises(PolicyError, match="cannot write there"):
        build_policy(settings(), agents=AgentFlags(record=folder / "r.jsonl"))


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such plan file"),
    ("{", "invalid JSON at line 1"),
    ('{"decisions": []}', "invalid plan"),
    ('{"decisions": [{"task_id": "a", "priority": "HIGH", "action": "x", '
     '"acceptance_criteria": ["y"], "dependencies": ["b"]}]}', "unknown dependency 'b'"),
    ('{"decisions": [{"task_id": "a", "priority": "HIGH", "action": "x", '
     '"acceptance_criteria": ["y"], "resolved_inputs": []}]}', "set by Assay"),
])
def test_plan_with_a_bad_plan_file_exits_2(nowhere: Path, content: str | None,
                                           message: str) -> None:
    plan = nowhere / "plan.json"
    if content is not None:
        plan.write_text(content)
    refused(["plan", "assay-run-goal-x-0123456789", str(plan)], message)


@pytest.mark.parametrize("by", ["", "  ", "ada\nlovelace", "a" * 129])
def test_plan_with_a_bad_author_exits_2(nowhere: Path, by: str) -> None:
    refused(["plan", "assay-run-goal-x-0123456789", str(EXAMPLE), "--by", by], "--by: give a name")


def test_plan_for_an_unknown_run_is_refused(dev_env: WorkflowEnvironment, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", dev_env.client.service_client.config.target_host)
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))  # the plan's inputs go there
    result = runner.invoke(app, ["plan", "assay-run-goal-nope-0000000000", str(EXAMPLE)])
    assert result.exit_code == 2
    assert "refused: no run 'assay-run-goal-nope-0000000000'" in result.stderr
