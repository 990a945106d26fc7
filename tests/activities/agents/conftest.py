"""The agent role tests' shared fixtures: a scripted Messages API server and the roles on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from pydantic import SecretStr

from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import KEY, MODEL
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def agents(fake: FakeAnthropic) -> AsyncIterator[Agents]:
    """Every role on one model, answered by ``fake``."""
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield Agents(gateway)
    await gateway.aclose()
