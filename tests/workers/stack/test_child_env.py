"""A stack started in the background gets the parent's configuration intact, secrets included.

End to end: `assay up --detach` with the key only in the parent's environment, and a model
call that the scripted Messages API server receives with that key.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from client.assay import AssayClient, connect
from tests.support.e2e import ROOT
from tests.support.fake_anthropic import FakeAnthropic, SeenRequest
from tests.support.goal_script import GOAL, script
from tests.support.waiting import wait_for
from tests.workers.stack.test_embedded import free_port, private_root
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import build_policy, queues_from
from workers.settings import Settings
from workers.stack.launcher import down, up
from workers.stack.process import child_env
from workflows.contracts.pools import Pool

KEY = "sk-ant-parent-only-0123456789"
DATABASE = "postgresql+asyncpg://assay:pa55@db.example:5432/assay"
DATA = ROOT / "tests" / "data" / "goal" / "measurements.csv"


def revealed(settings: Settings) -> dict[str, Any]:
    """Every setting, secrets as their values (what the child must end up with)."""
    values = {name: getattr(settings, name) for name in Settings.model_fields}
    return {name: value.get_secret_value() if isinstance(value, SecretStr) else value
            for name, value in values.items()}


def test_every_setting_reaches_the_child_as_the_parent_has_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the key only as the SDK's variable
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    monkeypatch.setenv("ASSAY_DATABASE_URL", DATABASE)
    monkeypatch.setenv("ASSAY_MODELS", '{"planner": "claude-opus-5", "coder": "claude-x"}')
    monkeypatch.setenv("ASSAY_MEMORY_ENABLED", "false")
    monkeypatch.setenv("ASSAY_METRICS_PORT", "9464")
    monkeypatch.setenv("ASSAY_MODEL_REPLAY_PATH", str(tmp_path / "r.jsonl"))
    parent = Settings()
    assert parent.anthropic_api_key is not None and parent.database_url is not None
    secrets = [name for name in Settings.model_fields
               if isinstance(getattr(parent, name), SecretStr)]
    assert sorted(secrets) == ["anthropic_api_key", "database_url"], "every secret is set"

    env = child_env(parent)
    assert env["ASSAY_ANTHROPIC_API_KEY"] == KEY and env["ASSAY_DATABASE_URL"] == DATABASE
    assert "*" not in env["ASSAY_ANTHROPIC_API_KEY"]
    for name in list(os.environ):  # the child sees only what child_env gives it
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert revealed(Settings()) == revealed(parent)


@pytest.mark.integration
async def test_a_detached_stack_calls_the_model_with_the_key_of_the_parent_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with private_root() as root, FakeAnthropic() as fake:
        script(fake)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the key only as the SDK's variable
        monkeypatch.setenv("ASSAY_ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ASSAY_DATA_DIR", str(root / "assay"))
        monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", f"127.0.0.1:{free_port()}")
        monkeypatch.setenv("ASSAY_TEMPORAL_UI_PORT", str(free_port()))
        settings = Settings()
        try:
            assert await asyncio.to_thread(up, settings, detach=True, say=lambda _: None) == 0
            client = AssayClient(await connect(settings.temporal_address,
                                               settings.temporal_namespace),
                                 task_queue=settings.queue(Pool.ORCHESTRATION))
            policy = build_policy(settings, memory=False, skills=False)  # the planner it is
            assert policy.agents.enabled
            await client.start_run(load_goal(GOAL, [DATA], max_bytes=settings.max_plan_bytes,
                                             policy=policy, queues=queues_from(settings)))
            await wait_for(lambda: bool(fake.requests), timeout=90, what="a model call")
        finally:
            down(settings, say=lambda _: None, timeout=20)
    assert fake.requests[0].path == "/v1/messages"
    assert {sent_key(request) for request in fake.requests} == {KEY}


def sent_key(request: SeenRequest) -> str | None:
    """The key a request carried: ``x-api-key``, or ``Authorization: Bearer`` (SDK 2.x)."""
    bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
    return request.headers.get("x-api-key") or bearer or None
