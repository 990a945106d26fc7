"""The evaluation suite's dose goal, recorded against the scripted model server and replayed.

With ``ASSAY_SAVE_EXAMPLE_RECORDING=1`` (``make example-recording``) the recording is saved
where the suite replays it from; otherwise the test checks that the shipped recording still
answers every request the goal makes, with the server gone, and reaches the suite's reference.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import report_of, scripted_pools, store_of
from tests.support.fake_anthropic import FakeAnthropic
from tests.workers.evaluation.dose_script import DATA, GOAL, RECORDING, SUITE, script
from workers.evaluation.scoring import score
from workers.evaluation.suite import load_suite
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.settings import Settings
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    async with scripted_pools(dev_env.client, fresh_database_url, tmp_path / "assay",
                              task_queue, script) as served:
        yield served


async def run_goal(client: AssayClient, settings: Settings, flags: AgentFlags) -> RunReport:
    policy = build_policy(settings, agents=flags)
    req = load_goal(GOAL, [DATA], max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    run_id = await client.start_run(req, again=True)
    return report_of(await asyncio.wait_for(client.result(run_id), timeout=180))


@pytest.mark.timeout(600)
async def test_the_dose_goal_is_recorded_replayed_and_meets_the_suite_reference(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    recording = tmp_path / "dose.jsonl"
    recorded = await run_goal(client, settings, AgentFlags(record=recording))
    assert recorded.status == "completed", recorded.status_reason
    if os.environ.get("ASSAY_SAVE_EXAMPLE_RECORDING"):
        shutil.copyfile(recording, RECORDING)
    fake.stop()
    seen = len(fake.requests)
    replayed = await run_goal(client, settings, AgentFlags(replay=RECORDING))
    assert len(fake.requests) == seen  # every answer came from the shipped recording
    assert replayed.status == "completed", replayed.status_reason
    assert replayed.model.calls == recorded.model.calls
    task = next(t for t in load_suite(SUITE)[0].tasks if t.id == "goal-dose-slope")
    verdicts = score(replayed.model_dump(mode="json"), task.expect)
    assert [v.line() for v in verdicts if not v.passed] == []
