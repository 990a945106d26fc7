"""Recording model exchanges against the fake server, then replaying them offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.llm.gateway import ModelGateway
from tests.activities.llm.test_models import GOOD, KEY, MODEL, ask
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse, usage
from workflows.contracts.spend import ChatMessage, ModelAnswer, ModelCall


async def record(tmp_path: Path, call: ModelCall, *replies: ToolUse | Text,
                 ) -> tuple[ModelAnswer, Path]:
    """Run ``call`` live against a scripted fake, recording; the server is gone after."""
    path = tmp_path / "models.jsonl"
    with FakeAnthropic() as fake:
        fake.script(*replies)
        gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                               record_path=path)
        answer = await gateway.call_model(call)
        await gateway.aclose()
    return answer, path


def replayer(path: Path) -> ModelGateway:
    """A gateway with no key and no server: it can only answer from ``path``."""
    return ModelGateway(None, "http://127.0.0.1:9", {"default": MODEL}, replay_path=path)


async def test_a_replay_reproduces_the_recorded_answer_offline(tmp_path: Path) -> None:
    live, path = await record(tmp_path, ask(), Text("APPROVE", usage=usage(100, 5)),
                              ToolUse(GOOD, usage=usage(150, 30, 0, 90)))
    replayed = await replayer(path).call_model(ask(run_id="run-2"))
    assert replayed.replayed and not live.replayed
    assert replayed.model_copy(update={"replayed": False}) == live
    assert (replayed.repairs, replayed.usage.input_tokens, replayed.usage.cache_read_input_tokens
            ) == (1, 250, 90)


async def test_the_recording_holds_each_round_and_no_key(tmp_path: Path) -> None:
    live, path = await record(tmp_path, ask(), ToolUse({"verdict": "MAYBE"}), ToolUse(GOOD))
    text = path.read_text()
    assert KEY not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["round"] for line in lines] == [0, 1]
    assert {line["exchange_id"] for line in lines} == {live.exchange_id}
    assert lines[0]["key"].startswith(live.exchange_id)
    assert lines[1]["request"]["messages"][2]["content"][0]["is_error"] is True
    assert lines[1]["response"]["content"][0]["input"] == GOOD
    assert lines[0]["usage"]["input_tokens"] == 100
    assert (lines[0]["role"], lines[0]["schema"], lines[0]["task_id"]) == (
        "reviewer", "Verdict", "t1")


async def test_a_request_with_no_recorded_answer_is_named(tmp_path: Path) -> None:
    _, path = await record(tmp_path, ask(), ToolUse(GOOD))
    other_plan = ask(messages=[ChatMessage(role="user", content="Review job 8. " + "z" * 300)])
    with pytest.raises(ApplicationError) as err:
        await replayer(path).call_model(other_plan)
    message = str(err.value)
    assert (err.value.type, err.value.non_retryable) == ("ReplayMiss", True)
    assert "role 'reviewer'" in message and "schema 'Verdict'" in message
    assert repr("Review job 8. " + "z" * 186) in message
    assert str(path) in message


async def test_a_corrupt_recording_fails_naming_the_line(tmp_path: Path) -> None:
    _, path = await record(tmp_path, ask(), ToolUse(GOOD))
    with path.open("a") as f:
        f.write('{"key": "half a line')
    with pytest.raises(ApplicationError) as err:
        await replayer(path).call_model(ask())
    assert err.value.type == "ReplayUnreadable" and "corrupt at line 2" in str(err.value)


async def test_a_missing_recording_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ApplicationError) as err:
        await replayer(tmp_path / "none.jsonl").call_model(ask())
    assert err.value.type == "ReplayUnreadable"
    assert "does not exist" in str(err.value) and "ASSAY_MODEL_RECORD_PATH" in str(err.value)


async def test_concurrent_calls_record_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "models.jsonl"
    calls = [ask(messages=[ChatMessage(role="user", content=f"job {i} " + "p" * 20_000)])
             for i in range(12)]
    with FakeAnthropic() as fake:
        fake.script(*[ToolUse(GOOD)] * len(calls))
        gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                               record_path=path)
        live = await asyncio.gather(*(gateway.call_model(c) for c in calls))
        await gateway.aclose()
    replay = replayer(path)
    replayed = [await replay.call_model(c) for c in calls]
    assert [a.exchange_id for a in replayed] == [a.exchange_id for a in live]
    assert len(path.read_text().splitlines()) == len(calls)
