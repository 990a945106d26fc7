"""The sweep example end to end on the dev server, with every pool and the real sandbox: the
plan's own line passes the review panel, runs and verifies, and reports its jobs' CPU time."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e_support import ROOT, isolated_settings, pools_serving, report_of, store_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workflows.client import AssayClient

pytestmark = pytest.mark.integration
SWEEP = ROOT / "examples" / "sweep" / "pending_actions.json"


@pytest.mark.timeout(300)
async def test_the_sweep_example_s_main_line_completes(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    queues = queues_from(settings)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        req = load_plan(SWEEP, max_bytes=settings.max_plan_bytes, queues=queues,
                        store=store_of(settings))
        result = report_of(await client.result(await client.start_run(req, again=True)))

    main = {t.task_id: t for t in result.tasks if t.task_id in ("data", "fit", "summary")}
    assert {tid: t.status for tid, t in main.items()} == {
        "data": "completed", "fit": "completed", "summary": "completed"}, [
        (t.task_id, t.status_reason) for t in result.tasks]
    assert main["fit"].metrics["r2"] == pytest.approx(0.8977, abs=1e-4)
    assert main["fit"].metrics["lr"] == 0.1
    for task in main.values():
        assert task.execution is not None
        assert 0 < task.execution.cpu_s < 30, task.execution
