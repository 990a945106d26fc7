"""Worker pools: what each serves, and the Prometheus endpoint every worker exposes."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from temporalio import workflow
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from client.assay import DATA_CONVERTER
from tests.support.e2e import isolated_settings, pools_serving
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, usage
from tests.support.waiting import wait_for
from workers.pools.builders import SERVED_POOLS, PoolSpec, build_specs, make_runtime, run_pools
from workflows.catalogue import (
    CALL_MODEL,
    DEBUG_JOB,
    JUDGE_HYPOTHESIS,
    JUDGE_MERGE,
    PLAN_GOAL,
    PROBE_ENVIRONMENT,
    REFLECT_FAILURE,
    REFORMULATE_QUERY,
    REVIEW_JOB_MODEL,
    REVIEW_PLAN,
    SUMMARIZE_RUN,
    SYNTHESIZE_STUDY,
    WRITE_JOB,
    WRITE_SKILL,
    declaration_of,
)
from workflows.contracts.base import Model
from workflows.contracts.context import TaskDigest
from workflows.contracts.policy import Queues
from workflows.contracts.pools import Pool
from workflows.contracts.roles import SummaryAnswer, SummaryRequest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_every_pool_is_served() -> None:
    assert set(Pool) == SERVED_POOLS


async def test_workers_expose_prometheus_metrics(dev_env: WorkflowEnvironment,
                                                 fresh_database_url: str, tmp_path: Path,
                                                 task_queue: str) -> None:
    port = free_port()
    settings = isolated_settings(tmp_path, task_queue).model_copy(update={"metrics_port": port})
    runtime = make_runtime(settings)
    assert runtime is not None
    client = await Client.connect(dev_env.client.service_client.config.target_host,
                                  data_converter=DATA_CONVERTER, runtime=runtime)
    stop = asyncio.Event()
    serving = asyncio.create_task(run_pools(settings, [Pool.ORCHESTRATION],
                                            database_url=fresh_database_url, stop=stop,
                                            client=client))
    body = ""

    def scrape() -> bool:
        nonlocal body
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                body = resp.read().decode()
        except OSError:
            return False
        return "temporal_num_pollers" in body

    try:
        await wait_for(lambda: asyncio.to_thread(scrape), timeout=30, what="metrics")
    finally:
        stop.set()
        await serving
    pollers = [line for line in body.splitlines() if line.startswith("temporal_num_pollers")]
    assert any(settings.queue(Pool.ORCHESTRATION) in line for line in pollers), pollers


def activities_by_name(spec: PoolSpec) -> dict[str, Any]:
    """A pool's activities by their declared names."""
    named: dict[str, Any] = {}
    for fn in spec.activities:
        decl = declaration_of(fn)
        assert decl is not None, fn
        named[decl.name] = fn
    return named


async def test_agent_roles_serve_on_the_agents_pool_and_the_probe_on_the_sandbox(
        tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path, "specs")
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, [Pool.AGENTS, Pool.SANDBOX],
                                  database_url="unused", stack=stack)
        agents = activities_by_name(specs[Pool.AGENTS])
        sandbox = activities_by_name(specs[Pool.SANDBOX])
    roles = [d.name for d in (PLAN_GOAL, REVIEW_PLAN, WRITE_JOB, REVIEW_JOB_MODEL, DEBUG_JOB,
                              SUMMARIZE_RUN, SYNTHESIZE_STUDY, REFLECT_FAILURE,
                              JUDGE_HYPOTHESIS)]
    writer = [d.name for d in (WRITE_SKILL, JUDGE_MERGE, REFORMULATE_QUERY)]
    assert set(agents) == {*roles, *writer, CALL_MODEL.name, "review_ops",
                           "review_quality_safety"}
    assert PROBE_ENVIRONMENT.name in sandbox and not set(roles) & set(sandbox)
    gateways = {id(agents[name].__self__.gateway) for name in roles + writer}
    assert gateways == {id(agents[CALL_MODEL.name].__self__)}


class SummarizeInput(Model):
    """Which queue the agents pool listens on, and what to ask it."""

    queue: str
    request: SummaryRequest


@workflow.defn(sandboxed=False)
class SummarizeWorkflow:
    """One role activity on the agents pool, called the way a workflow calls it."""

    @workflow.run
    async def run(self, given: SummarizeInput) -> SummaryAnswer:
        return await SUMMARIZE_RUN.run(given.request, queues=Queues(agents=given.queue),
                                       start_to_close=timedelta(seconds=30))


async def test_model_calls_show_in_the_agents_workers_metrics(
        dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str) -> None:
    port = free_port()
    with FakeAnthropic() as fake:
        fake.on_tool("RunAnswer", ToolUse({"answer": "Yes."}, usage=usage(1500, 40)))
        settings = isolated_settings(tmp_path, task_queue).model_copy(update={
            "metrics_port": port, "anthropic_api_key": SecretStr("sk-ant-test"),
            "anthropic_base_url": fake.base_url})
        client = await Client.connect(dev_env.client.service_client.config.target_host,
                                      data_converter=DATA_CONVERTER,
                                      runtime=make_runtime(settings))
        stop = asyncio.Event()
        serving = asyncio.create_task(run_pools(settings, [Pool.AGENTS],
                                                database_url="unused", stop=stop,
                                                client=client))
        request = SummaryRequest(run_id="assay-run-metrics-0123456789", goal="Do they differ?",
                                 tasks=[TaskDigest(task_id="t", action="test",
                                                   status="completed")])
        try:
            async with Worker(client, task_queue=task_queue, workflows=[SummarizeWorkflow]):
                answer = await client.execute_workflow(
                    SummarizeWorkflow.run,
                    SummarizeInput(queue=settings.queue(Pool.AGENTS), request=request),
                    id=f"summarize-{task_queue}", task_queue=task_queue)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
                body = resp.read().decode()
        finally:
            stop.set()
            await serving
    assert answer.answer.answer == "Yes."
    lines = [line for line in body.splitlines() if 'role="output_processor"' in line]
    assert any(line.startswith("assay_model_calls{") and line.endswith(" 1") for line in lines)
    assert any(line.startswith("assay_model_input_tokens{") and line.endswith(" 1500")
               for line in lines), lines
    assert any(line.startswith("assay_model_cost_usd_sum{") for line in lines), lines
    assert all(f'model="{settings.model_default}"' in line for line in lines)


async def test_serving_builds_every_contract_before_a_workflow_uses_one(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    # A contract first built inside the workflow sandbox may not find its annotations' names.
    class Probe(Model):
        """A contract the test session's own build (``tests/conftest.py``) never saw."""

        count: int

    assert not Probe.__pydantic_complete__
    settings = isolated_settings(tmp_path, task_queue)
    async with pools_serving(settings, fresh_database_url, dev_env.client,
                             pools=[Pool.ORCHESTRATION]):
        await wait_for(lambda: Probe.__pydantic_complete__, timeout=30,
                       what="the served pools to build the new contract")
