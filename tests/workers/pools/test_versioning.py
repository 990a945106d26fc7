"""Worker versioning: the build id, the settings, promoting a version, and ``assay check``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import cast

import pytest
from pydantic import ValidationError
from temporalio import activity, workflow
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentResponse,
)
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import isolated_settings
from tests.support.waiting import wait_for
from workers.pools.builders import SERVED_POOLS, PoolSpec, build_specs, serve_specs
from workers.pools.versioning import (
    Routing,
    build_id,
    deployment_config,
    deployment_version,
    describe_version,
    package_version,
    routing,
    set_current,
    source_digest,
)
from workers.settings import Settings
from workers.stack.check import poller_kinds, versions_items
from workflows.contracts.pools import Pool


def test_the_source_digest_follows_every_file_and_its_name(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    first = source_digest(tmp_path)
    assert source_digest(tmp_path) == first
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    changed = source_digest(tmp_path)
    assert changed != first
    (tmp_path / "pkg" / "a.py").rename(tmp_path / "pkg" / "c.py")
    assert source_digest(tmp_path) not in (first, changed)
    (tmp_path / "notes.txt").write_text("not code")
    assert source_digest(tmp_path) == source_digest(tmp_path)


def test_the_build_id_is_the_version_and_the_workflow_digest_unless_set() -> None:
    settings = Settings()
    assert build_id(settings) == f"{package_version()}-{source_digest()[:12]}"
    pinned = Settings(build_id="2026.11.1")
    assert build_id(pinned) == "2026.11.1"
    assert deployment_version(pinned) == WorkerDeploymentVersion("assay", "2026.11.1")
    config = deployment_config(deployment_version(pinned))
    assert config is not None and config.use_worker_versioning
    assert "build id 2026.11.1" in describe_version(pinned)


def test_versioning_can_be_turned_off() -> None:
    off = Settings(worker_versioning=False)
    assert deployment_version(off) is None
    assert deployment_config(None) is None
    assert "versioning off" in describe_version(off)


@pytest.mark.parametrize(("field", "value"), [("deployment_name", "assay.prod"),
                                              ("build_id", "v 2"),
                                              ("deployment_set_current", "sometimes")])
def test_bad_versioning_settings_are_refused_by_name(field: str, value: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings.model_validate({field: value})
    assert f"ASSAY_{field.upper()}" in Settings.describe_errors(err.value)


class BusyServer:
    """A server's answers to ``DescribeWorkerDeployment``: ``refusals`` first, then a routing
    whose current version is ``v1``. A real server gives these refusals only under load (its
    deployment workflow is busy, or the question to it is cancelled), so they are injected."""

    def __init__(self, *refusals: RPCStatusCode) -> None:
        self.namespace = "default"
        self.workflow_service = self
        self.refusals = list(refusals)
        self.asked = 0

    async def describe_worker_deployment(
            self, req: DescribeWorkerDeploymentRequest) -> DescribeWorkerDeploymentResponse:
        self.asked += 1
        if self.refusals:
            raise RPCError("operation was canceled", self.refusals.pop(0), b"")
        resp = DescribeWorkerDeploymentResponse()
        resp.worker_deployment_info.routing_config.current_deployment_version.build_id = "v1"
        return resp


async def test_a_busy_server_is_asked_again_and_a_refusal_is_not() -> None:
    busy = BusyServer(RPCStatusCode.CANCELLED, RPCStatusCode.RESOURCE_EXHAUSTED)
    assert (await routing(cast(Client, busy), "assay")).current == "v1"
    assert busy.asked == 3
    refusing = BusyServer(RPCStatusCode.PERMISSION_DENIED)
    with pytest.raises(RPCError):
        await routing(cast(Client, refusing), "assay")
    assert refusing.asked == 1


def test_a_version_s_role_in_the_routing() -> None:
    routes = Routing(current="v1", ramping="v2", ramp_percentage=25)
    assert [routes.role(b) for b in ("v1", "v2", "v0")] == ["current", "ramping 25 %",
                                                           "not current"]


@workflow.defn(sandboxed=False)
class IdleWorkflow:
    @workflow.run
    async def run(self) -> None:
        return None


@activity.defn
async def idle() -> None:
    return None


@asynccontextmanager
async def version_serving(env: WorkflowEnvironment, settings: Settings) -> AsyncGenerator[None]:
    """Every served pool's queue polled as ``settings``' version, by workers of no work."""
    specs = {pool: PoolSpec(workflows=[IdleWorkflow], activities=[idle],
                            versioning=VersioningBehavior.PINNED)
             if "workflow" in poller_kinds(pool) else PoolSpec(activities=[idle])
             for pool in SERVED_POOLS}
    stop = asyncio.Event()
    serving = asyncio.create_task(serve_specs(env.client, settings, specs, stop))
    try:
        yield
    finally:
        stop.set()
        await serving


async def test_a_first_version_becomes_current_a_later_one_waits_for_an_operator(
        dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    client, prefix = dev_env.client, f"v-{uuid.uuid4().hex[:8]}"
    deployment = f"assay-{prefix}"
    base = isolated_settings(tmp_path, prefix).model_copy(update={
        "deployment_name": deployment, "deployment_set_current": "if-none"})
    v1 = base.model_copy(update={"build_id": "v1"})
    v2 = base.model_copy(update={"build_id": "v2"})
    async with version_serving(dev_env, v1):
        async def current_is_v1() -> bool:
            return (await routing(client, deployment)).current == "v1"

        await wait_for(current_is_v1, timeout=60, what="the first version current", every=0.5)
        async with version_serving(dev_env, v2):
            version_v2 = WorkerDeploymentVersion(deployment, "v2")
            assert not await set_current(client, version_v2, only_if_none=True)

            async def both_poll() -> bool:
                lines = await versions_items(client, v1, window=70)
                return all("v2 (not current): 2 pollers" in item.detail
                           for item in lines if item.name == orchestration)

            orchestration = f"versions {v1.queue(Pool.ORCHESTRATION)}"
            await wait_for(both_poll, timeout=60, what="v2 polling orchestration", every=0.5)
            lines = {item.name: item for item in await versions_items(client, v1, window=70)}
            assert lines[orchestration].ok
            assert f"{deployment} v1 (current): 2 pollers" in lines[orchestration].detail
            assert f"{deployment} v2 (not current): 2 pollers" in lines[orchestration].detail

            unpolled = v1.model_copy(update={"queue_sandbox": f"{prefix}-nobody"})
            sandbox = {i.name: i for i in await versions_items(client, unpolled, window=70)}[
                f"versions {prefix}-nobody"]
            assert not sandbox.ok
            assert "the current version v1 does not poll it" in sandbox.detail

            assert await set_current(client, version_v2, only_if_none=False)
            assert (await routing(client, deployment)).current == "v2"


async def test_runs_are_pinned_and_the_library_moves(tmp_path: Path,
                                                     fresh_database_url: str) -> None:
    settings = isolated_settings(tmp_path, "pins")
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, [Pool.ORCHESTRATION, Pool.SKILLS],
                                  database_url=fresh_database_url, stack=stack)
    assert specs[Pool.ORCHESTRATION].versioning == VersioningBehavior.PINNED
    assert specs[Pool.SKILLS].versioning == VersioningBehavior.AUTO_UPGRADE
    config = deployment_config(WorkerDeploymentVersion("assay", "b"),
                               specs[Pool.ORCHESTRATION].versioning)
    assert config is not None
    assert config.default_versioning_behavior == VersioningBehavior.PINNED


async def test_turning_versioning_off_sends_new_workflows_to_unversioned_workers(
        dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    client, prefix = dev_env.client, f"off-{uuid.uuid4().hex[:8]}"
    deployment = f"assay-{prefix}"
    on = isolated_settings(tmp_path, prefix).model_copy(update={
        "deployment_name": deployment, "build_id": "v1", "deployment_set_current": "always"})
    async with version_serving(dev_env, on):
        async def current_is_v1() -> bool:
            return (await routing(client, deployment)).current == "v1"

        await wait_for(current_is_v1, timeout=60, what="v1 current", every=0.5)
    off = on.model_copy(update={"worker_versioning": False})
    async with version_serving(dev_env, off):
        async def unversioned() -> bool:  # the worker says so once it is up
            return (await routing(client, deployment)).current is None

        await wait_for(unversioned, timeout=60, what="v1 no longer current", every=0.5)
        handle = await client.start_workflow(IdleWorkflow.run, id=f"{prefix}-idle",
                                             task_queue=off.queue(Pool.ORCHESTRATION))
        await asyncio.wait_for(handle.result(), timeout=30)
    assert (await routing(client, deployment)).current is None
