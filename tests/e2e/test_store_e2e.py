"""A two-task plan whose sandbox hosts share no disk: only Temporal, PostgreSQL and S3.

The first task's sandbox (its own data directory) reads an input from the S3 store and
writes an artifact; that worker is then stopped and its whole data directory deleted. The
second task runs on another sandbox worker with a data directory of its own, and reads the
first task's artifact as a dependency; the orchestration pool (a third data directory)
keeps copies of both tasks' artifacts in the run's report. Everything crosses through the
store, by sha256.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import isolated_settings, pools_serving, report_of
from tests.support.s3 import S3Server, s3_server
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workflows.constants import task_workflow_id
from workflows.contracts.gates import GateDecision
from workflows.contracts.policy import RunPolicy
from workflows.contracts.pools import Pool
from workflows.contracts.results import TaskProgress

pytestmark = pytest.mark.integration

MAKE = (
    "import json, pathlib\n"
    "rows = pathlib.Path('data.csv').read_text().splitlines()[1:]\n"
    "pathlib.Path('table.csv').write_text('total\\n%d\\n' % sum(int(r) for r in rows))\n"
    "json.dump({'rows': len(rows)}, open('metrics.json', 'w'))\n"
)
USE = (
    "import json, pathlib\n"
    "total = int(pathlib.Path('deps/make/table.csv').read_text().splitlines()[1])\n"
    "pathlib.Path('double.txt').write_text(str(2 * total))\n"
    "json.dump({'total': total}, open('metrics.json', 'w'))\n"
)


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


def two_task_plan(folder: Path) -> Path:
    (folder / "data.csv").write_text("n\n1\n2\n3\n4\n")
    decisions: list[dict[str, Any]] = [
        {"task_id": "make", "priority": "HIGH", "action": "sum the column",
         "acceptance_criteria": ["table.csv written"], "inputs": ["data.csv"],
         "job": {"code": MAKE, "expected_artifacts": ["table.csv"],
                 "expected_metrics": ["rows"]},
         "checks": [{"metric": "rows", "op": "==", "value": 4}]},
        {"task_id": "use", "priority": "HIGH", "action": "double the sum",
         "acceptance_criteria": ["double.txt written"], "dependencies": ["make"],
         "job": {"code": USE, "expected_artifacts": ["double.txt"],
                 "expected_metrics": ["total"]},
         "checks": [{"metric": "total", "op": "==", "value": 10}]},
    ]
    path = folder / "pending_actions.json"
    path.write_text(json.dumps({"meeting_id": f"store-{folder.name}", "decisions": decisions}))
    return path


@pytest.fixture
def hosts(tmp_path: Path, task_queue: str, s3: S3Server) -> dict[str, Settings]:
    """Three 'hosts': orchestration and the rest, and two sandbox hosts, no directory shared."""
    return {name: isolated_settings(tmp_path / name, task_queue, **s3.settings(task_queue))
            for name in ("main", "sandbox-1", "sandbox-2")}


async def step_gate_waits(env: WorkflowEnvironment, run_id: str, task_id: str) -> None:
    handle = env.client.get_workflow_handle(task_workflow_id(run_id, task_id))

    async def waiting() -> bool:  # not found until the run starts the task's workflow
        progress = await handle.query("progress", result_type=TaskProgress)
        return progress.waiting is not None and progress.waiting.gate == "step"

    await wait_for(waiting, timeout=60, what=f"task {task_id}'s step gate")


async def approve_step(client: AssayClient, run_id: str, task_id: str) -> None:
    await client.decide(run_id, GateDecision(gate="step", task_id=task_id, decision="approve",
                                             by="ada"))


def serving(settings: Settings, pools: list[Pool], database_url: str,
            env: WorkflowEnvironment) -> AbstractAsyncContextManager[Settings]:
    return pools_serving(settings, database_url, env.client, pools=pools)


async def test_a_plan_runs_with_no_filesystem_shared_between_sandbox_hosts(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        hosts: dict[str, Settings], s3: S3Server, task_queue: str) -> None:
    main, first, second = hosts["main"], hosts["sandbox-1"], hosts["sandbox-2"]
    queues = queues_from(main)
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    plan = tmp_path / "plan"
    plan.mkdir()
    req = load_plan(two_task_plan(plan), max_bytes=main.max_plan_bytes, queues=queues,
                    store=main.artifact_store())
    req.policy = RunPolicy.model_validate({"gates": {"step": {"human": True}},
                                           "memory": {"enabled": False},
                                           "skills": {"enabled": False}})
    shutil.rmtree(plan)  # the input now lives in the store only
    others = [p for p in SERVED_POOLS if p is not Pool.SANDBOX]
    async with serving(main, others, fresh_database_url, dev_env):
        run_id = await client.start_run(req, again=True)
        async with serving(first, [Pool.SANDBOX], fresh_database_url, dev_env):
            await step_gate_waits(dev_env, run_id, "make")
            await approve_step(client, run_id, "make")
            await step_gate_waits(dev_env, run_id, "use")
        assert (first.work_dir / run_id / "make").is_dir()
        shutil.rmtree(first.root)  # the first host is gone, its disk with it
        async with serving(second, [Pool.SANDBOX], fresh_database_url, dev_env):
            await approve_step(client, run_id, "use")
            result = report_of(await asyncio.wait_for(client.result(run_id), timeout=120))

    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    use = next(t for t in result.tasks if t.task_id == "use")
    assert use.metrics["total"] == 10
    assert (second.work_dir / run_id / "use").is_dir() and not first.root.exists()
    assert result.report is not None
    folder = Path(result.report.results_json).parent
    assert folder.is_relative_to(main.root)
    kept = {(k.task_id, k.name) for k in result.files.artifacts}
    assert {("make", "table.csv"), ("use", "double.txt")} <= kept
    assert (folder / "artifacts" / "make" / "table.csv").read_text() == "total\n10\n"
    assert (folder / "artifacts" / "use" / "double.txt").read_text() == "20"
    stored = s3.keys(f"{task_queue}/sha256/")
    assert len(stored) >= 5  # the input, and each task's artifacts and metrics

