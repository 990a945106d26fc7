"""``--record FILE`` names a recording in the stack's data directory and links FILE to it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from activities.llm.recording import Recorder, recorded_path
from workers.intake.recordings import PolicyError, recording_for_run, recordings_folder
from workers.intake.runpolicy import AgentFlags, build_policy
from workers.settings import Settings
from workflows.contracts.policy import ModelRecording


def stack(tmp_path: Path) -> Settings:
    return Settings.model_validate({"data_dir": tmp_path / "data"})


def worker_appends(settings: Settings, name: str, line: str) -> None:
    """What the agents worker does with a run's recording: append under its name."""
    recorder = Recorder(recorded_path(recordings_folder(settings), name))
    asyncio.run(recorder.append({"key": line}))


def test_a_record_file_becomes_a_name_and_shows_what_the_worker_writes(tmp_path: Path) -> None:
    settings, wanted = stack(tmp_path), tmp_path / "mine" / "run.jsonl"
    wanted.parent.mkdir()
    recording = build_policy(settings, agents=AgentFlags(record=wanted)).agents.recording
    assert recording is not None and recording.mode == "record" and recording.path is None
    assert recording.name is not None and "/" not in recording.name
    worker_appends(settings, recording.name, "k1")
    assert '"key":"k1"' in wanted.read_text()  # the user's file shows the run's exchanges
    again = build_policy(settings, agents=AgentFlags(record=wanted)).agents.recording
    assert again == recording  # the same file: the same recording, appended to


def test_an_existing_recording_is_carried_over_and_appended_to(tmp_path: Path) -> None:
    settings, wanted = stack(tmp_path), tmp_path / "old.jsonl"
    wanted.write_text('{"key": "k0"}\n')
    recording = build_policy(settings, agents=AgentFlags(record=wanted)).agents.recording
    assert recording is not None and recording.name is not None
    assert wanted.is_symlink()
    worker_appends(settings, recording.name, "k1")
    assert wanted.read_text().splitlines()[0] == '{"key": "k0"}'
    assert '"key":"k1"' in wanted.read_text().splitlines()[1]


def test_a_link_to_somewhere_else_is_refused(tmp_path: Path) -> None:
    wanted = tmp_path / "r.jsonl"
    wanted.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(PolicyError, match=r"is a link to .*remove it or name another file"):
        build_policy(stack(tmp_path), agents=AgentFlags(record=wanted))


def test_a_named_or_digested_recording_passes_and_a_bare_one_is_refused(
        tmp_path: Path) -> None:
    settings = stack(tmp_path)
    named = ModelRecording(mode="record", name="study-1")
    assert recording_for_run(settings, named) == named
    with pytest.raises(PolicyError, match="a replay names its recording's"):
        recording_for_run(settings, ModelRecording(mode="replay"))


@pytest.mark.parametrize("name", ["../x", "a/b", "..", "a..b", ".hidden", "", "x" * 101,
                                  "a\x00b", "/abs"])
def test_a_recording_name_is_one_plain_file_name(name: str) -> None:
    with pytest.raises(ValueError, match=r"recording name|at least 1|at most 100"):
        ModelRecording(mode="record", name=name)
    with pytest.raises(ValueError):
        recorded_path(Path("/data/recordings"), name)
