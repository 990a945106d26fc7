"""The data profile in the prompts, as the model gets them: read from the store by digest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from activities.agents.roles import Agents
from activities.artifacts.store import LocalArtifactStore
from activities.llm.gateway import ModelGateway
from activities.profiles.stored import DataProfiles
from tests.activities.agents.test_agents import (
    DATA_PATH,
    DRAFT,
    JOB_ANSWER,
    KEY,
    MODEL,
    code_request,
    plan_request,
    prompt_of,
    review_request,
    summary_request,
)
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.roles import DataFile
from workflows.contracts.verdicts import InputDigest, ReviewInput

ROWS = "".join(f"{5 + i / 10:.1f},{'setosa' if i % 3 else ''},{i}\n" for i in range(150))
CSV = "sepal_length,species,plant\n" + ROWS


@pytest.fixture
def stored(tmp_path: Path) -> tuple[LocalArtifactStore, DataFile]:
    store = LocalArtifactStore(tmp_path / "store")
    path = tmp_path / "iris.csv"
    path.write_text(CSV)
    kept = store.put(path)
    return store, DataFile(name="iris.csv", path=DATA_PATH, sha256=kept.sha256,
                           size=kept.size, head=CSV[:60])


@pytest.fixture
async def gateway(fake: FakeAnthropic) -> AsyncIterator[ModelGateway]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield gateway
    await gateway.aclose()


def assert_profiled(prompt: str, size: int) -> None:
    assert "## Data profiles (read from each whole file; a cut profile says so)" in prompt
    assert f"iris.csv: CSV, {size:,} bytes" in prompt
    assert "rows: 150 (header not counted); columns: 3" in prompt
    assert "- sepal_length | number | 0 | 5 to 19.9" in prompt
    assert '- species | text | 50 | top "setosa": 100 (1 distinct)' in prompt
    assert "- plant | integer | 0 | 0 to 149" in prompt
    assert DATA_PATH not in prompt


async def test_coder_prompt_holds_row_count_and_column_types(
        fake: FakeAnthropic, gateway: ModelGateway,
        stored: tuple[LocalArtifactStore, DataFile]) -> None:
    store, data = stored
    fake.on_tool("JobOutput", ToolUse(JOB_ANSWER, usage=None))
    await Agents(gateway, store).write_job(code_request(data=[data]))
    assert_profiled(prompt_of(fake), data.size)


async def test_infrastructure_reviewer_prompt_holds_rows_size_and_types(
        fake: FakeAnthropic, gateway: ModelGateway,
        stored: tuple[LocalArtifactStore, DataFile]) -> None:
    store, data = stored
    fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.8},
                                              usage=None))
    req = review_request("infrastructure")
    review = ReviewInput.model_validate({
        **req.review.model_dump(),
        "inputs": [InputDigest(name=data.name, sha256=data.sha256, size=data.size)]})
    await Agents(gateway, store).review_job_model(req.model_copy(update={"review": review}))
    assert_profiled(prompt_of(fake), data.size)


async def test_planner_and_output_processor_prompts_hold_the_profile(
        fake: FakeAnthropic, gateway: ModelGateway,
        stored: tuple[LocalArtifactStore, DataFile]) -> None:
    store, data = stored
    fake.on_tool("RunAnswer", ToolUse({"answer": "Yes."}, usage=None))
    fake.on_tool("PlanDraftOutput", ToolUse(DRAFT, usage=None))
    agents = Agents(gateway, store)
    await agents.summarize_run(summary_request(data=[data]))
    await agents.plan_goal(plan_request(data=[data]))
    assert_profiled(prompt_of(fake, 0), data.size)
    assert_profiled(prompt_of(fake, 1), data.size)


async def test_a_cut_profile_says_so_in_the_prompt(
        fake: FakeAnthropic, gateway: ModelGateway,
        stored: tuple[LocalArtifactStore, DataFile]) -> None:
    store, data = stored
    fake.on_tool("JobOutput", ToolUse(JOB_ANSWER, usage=None))
    agents = Agents(gateway, store, profiles=DataProfiles(store, max_bytes=300))
    await agents.write_job(code_request(data=[data]))
    prompt = prompt_of(fake)
    assert "rows: 150" in prompt
    assert "lines left out to stay within 300 bytes]" in prompt
