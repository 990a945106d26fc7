"""The attack of issue 29 on real workers: a run started by hand names a host path for its
model recording. The agents worker must neither create nor open it, and the run must end with
the refusal in its history; the clients refuse such a policy before a start."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient, HostPathError
from client.study import StudyClient
from tests.support.e2e import ROOT, isolated_settings, report_of, store_of
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.goal_script import GOAL
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workflows.contracts.cycles import StudyInput
from workflows.contracts.policy import ModelRecording
from workflows.contracts.results import ResearchInput
from workflows.contracts.study import StudyState
from workflows.research.workflow import ResearchWorkflow

pytestmark = pytest.mark.integration
DATA = ROOT / "tests" / "data" / "goal" / "measurements.csv"


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr("sk-ant-test-host-paths"),
            "anthropic_base_url": fake.base_url})
        stop = asyncio.Event()
        running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                                database_url=fresh_database_url, stop=stop,
                                                client=dev_env.client))
        yield settings, fake
        stop.set()
        await running


def hostile_run(settings: Settings, mode: Literal["record", "replay"], path: Path,
                ) -> ResearchInput:
    policy = build_policy(settings, agents=AgentFlags(enabled=True, model_review=False,
                                                      debuggers=False, plan_review_rounds=0))
    policy.agents.recording = ModelRecording(mode=mode, path=str(path))
    req = load_goal(GOAL, [DATA], max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    return req.model_copy(update={"run_id": f"assay-run-attack-{mode}-{uuid.uuid4().hex[:8]}"})


async def test_a_recording_path_from_a_client_is_neither_created_nor_opened(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, fake = served
    created = tmp_path / "any" / "new" / "dir" / "x.jsonl"
    secret = tmp_path / "root" / "secret"
    secret.parent.mkdir()
    secret.write_text("not a recording: the first line would be 'corrupt at line 1'\n")
    attacks: list[tuple[Literal["record", "replay"], Path]] = [("record", created),
                                                               ("replay", secret)]
    for mode, path in attacks:
        req = hostile_run(settings, mode, path)
        # any Temporal client: the workflow started by hand, past Assay's own clients
        handle = await dev_env.client.start_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=settings.queue_orchestration)
        result = report_of(await asyncio.wait_for(handle.result(), timeout=180))
        history = (await handle.fetch_history()).to_json()
        assert result.status == "deferred" and "RecordingRefused" in result.status_reason
        assert "RecordingRefused" in history and "names a host path" in history
        assert "corrupt at line" not in history and "does not exist" not in history
    assert not (tmp_path / "any").exists()
    assert fake.requests == []  # refused before any model call
    recorded = settings.data_dir / "recordings"
    assert not recorded.exists() or not list(recorded.rglob("*.jsonl"))


async def test_the_clients_refuse_a_recording_path_before_a_start(
        dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    req = hostile_run(settings, "record", tmp_path / "new" / "x.jsonl")
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    with pytest.raises(HostPathError, match=r"names the host path .*Name the recording"):
        await client.start_run(req)
    studies = StudyClient(dev_env.client, task_queue=settings.queue_orchestration)
    with pytest.raises(HostPathError):
        await studies.start_study(StudyInput(state=StudyState(study_id="s", goal=GOAL),
                                             policy=req.policy))
    assert not (tmp_path / "new").exists()
