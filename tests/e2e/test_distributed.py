"""A distributed run on one machine: every pool in its own process, as if on its own host.

Each pool process has its own data directory (so its own work root, reports, Qdrant and
environments); they share only Temporal, PostgreSQL and the S3 artifact store (moto's
server). The iris plan is submitted from a fifth directory, the sandbox process is killed
while a job runs and a new one starts on a fresh data directory, and the run completes with
every event written once. Then the example goal is replayed from its recording: the
recording and the data reach the agents and sandbox hosts through the store alone.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    EXAMPLE,
    isolated_settings,
    kill_hard,
    queue_env,
    report_of,
    start_worker,
    stop_gently,
    stored_events,
    worker_env,
)
from tests.support.s3 import S3Server, s3_server
from tests.support.waiting import wait_for
from workers.cli.show import load_report
from workers.intake.goalfile import load_goal
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workflows.contracts.policy import RunPolicy
from workflows.contracts.pools import Pool
from workflows.contracts.results import ResearchResult

pytestmark = pytest.mark.integration
GOAL = Path(__file__).resolve().parents[2] / "examples" / "goal"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


def attempts(data_dir: Path) -> list[Path]:
    """Attempt directories a sandbox host has laid out."""
    return sorted((data_dir / "work").glob("*/*/attempt-*"))


async def test_iris_runs_with_every_pool_on_its_own_host_and_a_sandbox_killed(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, s3: S3Server) -> None:
    submitter = isolated_settings(tmp_path / "submitter", task_queue, **s3.settings(task_queue))
    queues = queues_from(submitter)
    address = dev_env.client.service_client.config.target_host

    def host(name: str, pool: Pool) -> subprocess.Popen[bytes]:
        env = worker_env(address, fresh_database_url, tmp_path / name, **queue_env(submitter),
                         **s3.env(task_queue))
        return start_worker(env, tmp_path / f"{name}.log", (pool,))

    procs = {pool: host(pool.name.lower(), pool) for pool in SERVED_POOLS}
    try:
        req = load_plan(EXAMPLE, max_bytes=submitter.max_plan_bytes, queues=queues,
                        store=submitter.artifact_store(),
                        policy=RunPolicy(heartbeat_timeout_s=3))
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        run_id = await client.start_run(req, again=True)
        first = tmp_path / "sandbox"
        await wait_for(lambda: bool(attempts(first)), timeout=180, what="a job to start")
        kill_hard(procs[Pool.SANDBOX])
        procs[Pool.SANDBOX] = host("sandbox-2", Pool.SANDBOX)  # a new host, a fresh disk
        result = report_of(await asyncio.wait_for(client.result(run_id), timeout=300))
        goal_result = await replay_goal(client, submitter, tmp_path / "submitter")
        goal = report_of(goal_result)
    finally:
        for proc in procs.values():
            stop_gently(proc)

    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    assert {t.status for t in result.tasks} == {"completed"}
    assert attempts(tmp_path / "sandbox-2"), "the second sandbox host ran the rest"
    assert result.report is not None
    assert Path(result.report.results_json).is_relative_to(tmp_path / "orchestration")
    kept = {(k.task_id, k.name) for k in result.files.artifacts}
    assert {(t.task_id, a.name) for t in result.tasks for a in t.artifacts} <= kept
    events = await stored_events(fresh_database_url, run_id)
    orders = Counter((e.event.node_id, e.event.execution_order) for e in events)
    assert max(orders.values()) == 1, "an event was written twice"
    kinds = Counter((e.event.node_id, e.event.event_type, e.event.event_subtype)
                    for e in events)
    assert kinds[("run", "checkpoint", "complete")] == 1
    for task in result.tasks:
        assert kinds[(task.task_id, "code_exec", "complete")] == 1, task.task_id

    assert goal.status == "completed", [(t.task_id, t.status_reason) for t in goal.tasks]
    assert goal.answer is not None and "group b" in goal.answer.answer
    assert goal.model.calls > 0  # answered by the agents host from the recording alone
    recording = goal_recording(tmp_path / "submitter")
    assert not recording.exists()  # the agents host read the store, not this path
    assert list((tmp_path / "agents" / "recordings").glob("*.jsonl")), "fetched by digest"
    shutil.rmtree(tmp_path / "orchestration" / "runs")  # as if written on another host
    assert load_report(goal_result) is None
    assert load_report(goal_result, submitter.artifact_store()) == goal  # by its digest


def goal_recording(folder: Path) -> Path:
    return folder / "recording.jsonl"


async def replay_goal(client: AssayClient, submitter: Settings, folder: Path
                      ) -> ResearchResult:
    """The example goal replayed from its recording (skills off: the models answer it), with
    the recording and the data put in the store and then deleted from the submitting host."""
    recording, data = goal_recording(folder), folder / "measurements.csv"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(GOAL / "recording.jsonl", recording)
    shutil.copyfile(GOAL / "measurements.csv", data)
    policy = build_policy(submitter, agents=AgentFlags(replay=recording), skills=False)
    req = load_goal((GOAL / "goal.txt").read_text(), [data],
                    max_bytes=submitter.max_plan_bytes, policy=policy,
                    queues=queues_from(submitter), store=submitter.artifact_store())
    recording.unlink()
    data.unlink()
    run_id = await client.start_run(req, again=True)
    return await asyncio.wait_for(client.result(run_id), timeout=300)
