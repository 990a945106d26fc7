"""Model metrics: each request a role sends (or replays) adds to counters labelled by role,
model and source, through the activity's metric meter."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig
from temporalio.testing import ActivityEnvironment

from activities.agents.roles import Agents
from activities.artifacts.store import LocalArtifactStore
from activities.llm.gateway import ModelGateway
from activities.llm.metrics import (
    CACHE_READ_TOKENS,
    CACHE_WRITE_TOKENS,
    CALLS,
    COST_USD,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
)
from tests.activities.agents.test_agents import DRAFT, KEY, MODEL, plan_request
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse, usage
from workflows.contracts.policy import ModelRecording

Totals = dict[tuple[str, str, str, str], float]
"""Summed value per (metric, role, model, source)."""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@dataclass(frozen=True)
class Metered:
    """A runtime whose metric meter writes to ``buffer``."""

    buffer: MetricBuffer
    runtime: Runtime

    def env(self) -> ActivityEnvironment:
        """An activity context using this runtime's meter."""
        env = ActivityEnvironment()
        env.metric_meter = self.runtime.metric_meter
        return env


@pytest.fixture(scope="module")
def metrics_runtime() -> Metered:
    buffer = MetricBuffer(10_000)
    return Metered(buffer, Runtime(telemetry=TelemetryConfig(metrics=buffer)))


@pytest.fixture
def metered(metrics_runtime: Metered) -> Metered:
    metrics_runtime.buffer.retrieve_updates()  # drop what earlier tests left
    return metrics_runtime


def totals(buffer: MetricBuffer) -> Totals:
    summed: Totals = defaultdict(float)
    for update in buffer.retrieve_updates():
        attrs = update.attributes
        summed[(update.metric.name, str(attrs.get("role")), str(attrs.get("model")),
                str(attrs.get("source")))] += update.value
    return summed


async def test_every_request_is_counted_with_its_tokens_and_cost(
        fake: FakeAnthropic, metered: Metered) -> None:
    fake.script(Text("thinking", usage=usage(1000, 100, 0, 0)),
                ToolUse(DRAFT, usage=usage(1200, 300, 4000, 800)))
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    answer = await metered.env().run(Agents(gateway).plan_goal, plan_request())
    await gateway.aclose()
    got = totals(metered.buffer)
    live = ("planner", MODEL, "live")
    assert got[(CALLS, *live)] == 2
    assert got[(INPUT_TOKENS, *live)] == 2200
    assert got[(OUTPUT_TOKENS, *live)] == 400
    assert got[(CACHE_WRITE_TOKENS, *live)] == 4000
    assert got[(CACHE_READ_TOKENS, *live)] == 800
    assert got[(COST_USD, *live)] == pytest.approx(answer.spend.usage.cost_usd)
    assert answer.spend.usage.cost_usd > 0


async def test_replayed_requests_are_counted_apart(
        fake: FakeAnthropic, metered: Metered, tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    folder = tmp_path / "recordings"
    fake.script(ToolUse(DRAFT, usage=usage(500, 50)))
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL}, store=store,
                           recordings_dir=folder)
    agents = Agents(gateway)
    await agents.plan_goal(plan_request(recording=ModelRecording(mode="record", name="models")))
    digest = store.put(folder / "recorded" / "models.jsonl").sha256
    metered.buffer.retrieve_updates()
    await metered.env().run(
        agents.plan_goal, plan_request(recording=ModelRecording(mode="replay", sha256=digest)))
    await gateway.aclose()
    got = totals(metered.buffer)
    assert got[(CALLS, "planner", MODEL, "replay")] == 1
    assert got[(INPUT_TOKENS, "planner", MODEL, "replay")] == 500
    assert not any(source == "live" for (_, _, _, source) in got)


async def test_outside_an_activity_a_role_answers_and_records_nothing(
        fake: FakeAnthropic, metered: Metered) -> None:
    fake.script(ToolUse(DRAFT))
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    answer = await Agents(gateway).plan_goal(plan_request())
    await gateway.aclose()
    assert answer.spend.calls == 1
    assert totals(metered.buffer) == {}
