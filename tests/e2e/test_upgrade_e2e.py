"""Upgrading workers while a run waits on a person: the run stays on the version it began on.

v1 is ``assay worker`` (every pool) in a process of its own; v2 serves every pool in this
process, with a ResearchWorkflow whose commands differ (v1's runs cannot replay on it). With v2
current, the run waiting at its plan gate under v1 is approved and finishes on v1 (its workflow
tasks completed by v1's build id, its job run by v1's process); a new run takes v2; the server
then reports v1 drained, and v1 stops.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from client.assay import DATA_CONVERTER, AssayClient
from tests.conftest import binary
from tests.support.e2e import (
    isolated_settings,
    queue_env,
    slow_plan,
    start_worker,
    stop_gently,
    worker_env,
)
from tests.support.waiting import wait_for
from tests.workflows.incompatible import TimerFirstResearchWorkflow
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, build_specs, serve_specs
from workers.pools.versioning import routing, version_state
from workers.settings import Settings
from workers.stack.temporal import dev_server_flags
from workflows.contracts.gates import GateDecision
from workflows.contracts.pools import Pool
from workflows.research.branch import BranchWorkflow
from workflows.study.workflow import StudyWorkflow
from workflows.task.workflow import TaskWorkflow

pytestmark = pytest.mark.integration


@pytest.fixture
async def server() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server of the test's own that checks a version's drainage every second (the
    default waits minutes), so a drained v1 shows while the test runs."""
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=binary("temporal"), data_converter=DATA_CONVERTER,
        search_attributes=[], ui=False,
        dev_server_extra_args=[
            *dev_server_flags(),
            "--dynamic-config-value", 'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
            "--dynamic-config-value",
            'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"'])
    yield env
    await env.shutdown()


async def serve_v2(client: Client, settings: Settings, database_url: str,
                   stop: asyncio.Event) -> None:
    """Every pool as version v2, its ResearchWorkflow the incompatible one."""
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, list(SERVED_POOLS), database_url=database_url,
                                  stack=stack)
        specs[Pool.ORCHESTRATION].workflows = [TimerFirstResearchWorkflow, BranchWorkflow,
                                               TaskWorkflow, StudyWorkflow]
        await serve_specs(client, settings, specs, stop)


async def histories(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """The history of ``workflow_id`` and of every child workflow it started, recursively."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    found = [history]
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            child = event.child_workflow_execution_started_event_attributes.workflow_execution
            found += await histories(client, child.workflow_id)
    return found


def completed_by(history: WorkflowHistory) -> set[str]:
    """The build ids that completed the history's workflow tasks."""
    return {e.workflow_task_completed_event_attributes.deployment_version.build_id
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED}


def activity_workers(history: WorkflowHistory) -> set[str]:
    """The identities of the workers that started the history's activity tasks."""
    return {e.activity_task_started_event_attributes.identity for e in history.events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED}


async def test_waiting_run_finishes_on_v1_new_run_takes_v2_then_v1_drains(
        server: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path) -> None:
    client, prefix = server.client, f"up-{uuid.uuid4().hex[:8]}"
    deployment = f"assay-{prefix}"
    v1, v2 = (WorkerDeploymentVersion(deployment, b) for b in ("v1", "v2"))
    settings = isolated_settings(tmp_path / "v1", prefix)
    address = client.service_client.config.target_host
    log = tmp_path / "v1.log"
    v1_proc = start_worker(
        worker_env(address, fresh_database_url, settings.data_dir, **queue_env(settings),
                   ASSAY_SKILLS_BUILTIN="false", ASSAY_DEPLOYMENT_NAME=deployment,
                   ASSAY_BUILD_ID="v1", ASSAY_DEPLOYMENT_SET_CURRENT="always"), log)
    stop_v2 = asyncio.Event()
    serving_v2: asyncio.Task[None] | None = None
    try:
        async def current_is(build: str) -> bool:
            return (await routing(client, deployment)).current == build

        await wait_for(lambda: current_is("v1"), timeout=120, what="v1 current", every=0.5)
        assert f"deployment {deployment}, build id v1" in log.read_text()

        assay = AssayClient(client, task_queue=settings.queue_orchestration)
        policy = build_policy(settings, human_gates=["plan"])
        (tmp_path / "plan1").mkdir()
        first = await assay.start_run(load_plan(
            slow_plan(tmp_path / "plan1", 0.1), max_bytes=settings.max_plan_bytes,
            policy=policy, queues=queues_from(settings)))

        async def gate_open() -> bool:
            return (await assay.progress(first)).waiting is not None

        await wait_for(gate_open, timeout=60, what="the plan gate under v1")

        settings_v2 = isolated_settings(tmp_path / "v2", prefix).model_copy(update={
            "deployment_name": deployment, "build_id": "v2", "deployment_set_current": "always"})
        serving_v2 = asyncio.create_task(
            serve_v2(client, settings_v2, fresh_database_url, stop_v2))
        await wait_for(lambda: current_is("v2"), timeout=120, what="v2 current", every=0.5)

        await assay.decide(first, GateDecision(gate="plan", decision="approve", by="ada"))
        result = await asyncio.wait_for(assay.result(first), timeout=120)
        assert result.status == "completed", result

        runs = await histories(client, first)
        assert len(runs) == 2  # the run and its task
        assert all(completed_by(h) == {"v1"} for h in runs), [completed_by(h) for h in runs]
        v1_identity = f"{v1_proc.pid}@{socket.gethostname()}"
        assert activity_workers(runs[1]) == {v1_identity}
        info = (await client.get_workflow_handle(first).describe()
                ).raw_description.workflow_execution_info.versioning_info
        assert info.behavior == VersioningBehavior.PINNED.value
        assert info.deployment_version.build_id == "v1"
        replay = await Replayer(workflows=[TimerFirstResearchWorkflow],
                                data_converter=DATA_CONVERTER).replay_workflow(
            runs[0], raise_on_replay_failure=False)
        assert replay.replay_failure is not None, "v2 should not replay v1's run"

        (tmp_path / "plan2").mkdir()
        second = await assay.start_run(load_plan(
            slow_plan(tmp_path / "plan2", 0.1), max_bytes=settings.max_plan_bytes,
            policy=policy, queues=queues_from(settings)))
        assert await client.get_workflow_handle(second).result() == f"v2 ran {second}"
        assert completed_by(await client.get_workflow_handle(second).fetch_history()) == {"v2"}

        async def drained() -> bool:
            return (await version_state(client, v1)).drainage == "drained"

        await wait_for(drained, timeout=60, what="v1 drained", every=0.5)
        assert (await version_state(client, v2)).status == "current"
        stop_gently(v1_proc)
        assert v1_proc.returncode == 0, log.read_text()[-2000:]
    finally:
        stop_gently(v1_proc)
        stop_v2.set()
        if serving_v2 is not None:
            await serving_v2
