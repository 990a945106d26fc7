"""The offline researcher in the coder's conversation, against the scripted Messages server.

The coder calls ``lookup_docs``; the activity answers from the installed package's files in
the same conversation, the model then writes its job. Lookups are bounded per call, counted
as model calls, recorded and replayed like every round.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.agents.roles import Agents
from activities.artifacts.store import LocalArtifactStore
from activities.llm.gateway import ModelGateway
from activities.research.tool import LOOKUP_TOOL, DocsResearcher
from tests.activities.agents.test_agents import JOB_ANSWER, KEY, MODEL, code_request
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.policy import ModelRecording

MEDIAN = ToolUse({"target": "statistics.median"}, name=LOOKUP_TOOL)


@pytest.fixture
async def researching(fake: FakeAnthropic) -> AsyncIterator[Agents]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield Agents(gateway, researcher=DocsResearcher(limit=2, secrets=[KEY]))
    await gateway.aclose()


def answered(fake: FakeAnthropic, n: int) -> dict[str, Any]:
    """The one tool result of the last turn of the ``n``-th request."""
    messages: list[dict[str, Any]] = fake.requests[n].body["messages"]
    (result,) = messages[-1]["content"]
    return result


async def test_the_coder_looks_up_a_function_then_writes_its_job(
        fake: FakeAnthropic, researching: Agents) -> None:
    fake.script(MEDIAN, ToolUse(JOB_ANSWER))
    answer = await researching.write_job(code_request())
    assert answer.job.source == JOB_ANSWER["code"]
    assert answer.spend.calls == 2
    first = fake.requests[0].body
    assert [t["name"] for t in first["tools"]] == ["JobOutput", LOOKUP_TOOL]
    assert first["tool_choice"]["type"] == "any"
    assert "There is no network" in first["system"][0]["text"]
    result = answered(fake, 1)
    assert result["type"] == "tool_result" and "is_error" not in result
    assert "def median(data)" in result["content"]
    assert 'trust="untrusted"' in result["content"]


async def test_an_unknown_name_comes_back_as_not_found_and_the_coder_goes_on(
        fake: FakeAnthropic, researching: Agents) -> None:
    fake.script(ToolUse({"target": "nosuchpkg.fit"}, name=LOOKUP_TOOL), ToolUse(JOB_ANSWER))
    answer = await researching.write_job(code_request())
    assert answer.spend.calls == 2
    result = answered(fake, 1)
    assert result["is_error"] is True
    assert result["content"].startswith("not found: no installed module")


async def test_lookups_past_the_limit_go_back_as_an_invalid_answer(
        fake: FakeAnthropic, researching: Agents) -> None:
    fake.script(MEDIAN, MEDIAN, MEDIAN, ToolUse(JOB_ANSWER))
    answer = await researching.write_job(code_request())
    assert answer.spend.calls == 4 and answer.spend.repairs == 1
    refused = answered(fake, 3)
    assert refused["is_error"] is True and "JobOutput" in refused["content"]


async def test_a_model_that_only_looks_things_up_ends_after_a_bounded_number_of_calls(
        fake: FakeAnthropic, researching: Agents) -> None:
    fake.script(*[MEDIAN] * 10)
    with pytest.raises(ApplicationError) as err:
        await researching.write_job(code_request())
    assert err.value.type == "InvalidModelOutput"
    assert len(fake.requests) == 2 + 2 + 1  # the limit, the repairs, the first answer


async def test_a_recorded_conversation_with_lookups_replays_offline(
        fake: FakeAnthropic, tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    store = LocalArtifactStore(tmp_path / "store")
    fake.script(MEDIAN, ToolUse(JOB_ANSWER))
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                           recordings_dir=folder)
    recording = Agents(gateway, researcher=DocsResearcher(limit=2, secrets=[KEY]))
    live = await recording.write_job(
        code_request(recording=ModelRecording(mode="record", name="coder")))
    await gateway.aclose()
    path = folder / "recorded" / "coder.jsonl"
    rounds = [json.loads(line)["round"] for line in path.read_text().splitlines()]
    assert rounds == [0, 1]
    offline = Agents(ModelGateway(None, "http://127.0.0.1:9", {"default": MODEL}, store=store,
                                  recordings_dir=tmp_path / "cache"),
                     researcher=DocsResearcher(limit=2))
    replayed = await offline.write_job(code_request(
        recording=ModelRecording(mode="replay", sha256=store.put(path).sha256)))
    assert replayed.job == live.job and replayed.spend.replayed
    assert replayed.spend.calls == 2
