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
async def test_the_sweep_example_runs_its_branches_and_keeps_the_best_line(
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
    # the plan's two branches ran beside the main line (lr 0.1); lr-0.3 fits best and is kept
    assert main["fit"].branch == "lr-0.3" and main["fit"].metrics["lr"] == 0.3
    assert main["fit"].metrics["r2"] == pytest.approx(0.9294, abs=1e-4)
    assert result.branches is not None
    lines = {b.name: b for b in result.branches.branches}
    assert set(lines) == {"lr-0.01", "lr-0.3"}
    assert [b.name for b in lines.values() if b.selected] == ["lr-0.3"]
    assert all(b.reused == ["data"] and b.status == "completed" for b in lines.values())
    group = lines["lr-0.3"].group
    assert result.branches.main[group].metric == pytest.approx(0.8977, abs=1e-4)
    for task in main.values():
        assert task.execution is not None
        assert 0 < task.execution.cpu_s < 30, task.execution
