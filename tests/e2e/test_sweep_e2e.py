"""The sweep example end to end on the dev server, with every pool and the real sandbox: the
plan's own line passes the review panel, runs and verifies, and reports its jobs' CPU time."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import ROOT, isolated_settings, pools_serving, report_of, store_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from

pytestmark = pytest.mark.integration
SWEEP = ROOT / "examples" / "sweep" / "plan.json"
CLOSE = ROOT / "examples" / "sweep" / "close_rates.json"


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


@pytest.mark.timeout(300)
async def test_a_sweep_within_its_intervals_is_reported_as_a_tie_in_one_table(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    queues = queues_from(settings)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        req = load_plan(CLOSE, max_bytes=settings.max_plan_bytes, queues=queues,
                        store=store_of(settings))
        result = report_of(await client.result(await client.start_run(req, again=True)))

    assert result.branches is not None and len(result.sweeps) == 1, result.status_reason
    table = result.sweeps[0]
    # lr 0.35 ranks first on its point r², but every line lies within the others' intervals
    assert [line.line for line in table.lines] == ["lr-0.35", "lr-0.3", "main"]
    assert table.tie and all(line.tied for line in table.lines)
    assert table.kept == "main" and [line.line for line in table.lines if line.kept] == ["main"]
    assert table.why.startswith("tie on r2: lr-0.35, lr-0.3, main differ within their intervals")
    by_line = {line.line: line for line in table.lines}
    assert by_line["lr-0.3"].parameters == {"args.lr": 0.3} and by_line["main"].parameters == {}
    r2 = by_line["main"].metrics["r2"]
    assert r2["value"] == pytest.approx(0.9285, abs=1e-4) and r2["level"] == 0.95
    assert set(by_line["lr-0.35"].metrics) >= {"r2", "loss", "w", "b", "lr"}
    assert all(line.status == "completed" and line.cpu_s > 0 for line in table.lines)
    fit = {t.task_id: t for t in result.tasks}["fit"]
    assert fit.branch is None  # the main line stays the run's
    assert result.report is not None
    summary = Path(result.report.summary_md).read_text(encoding="utf-8")
    assert "## Sweeps" in summary and "Kept: **main** (a tie; selection best, tie rule " \
        "simplest)" in summary
    assert "| lr-0.3 | args.lr=0.3 | completed | 0.9294 \\[0.9131, 0.9398\\] 95 % |" in summary
