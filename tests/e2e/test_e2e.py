"""The example plan end to end on the dev server with real workers, sandbox and event store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    EXAMPLE,
    isolated_settings,
    pools_serving,
    report_of,
    store_of,
    stored_events,
)
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.settings import Settings
from workflows.contracts.policy import Queues

pytestmark = pytest.mark.integration


@pytest.fixture
async def workers(dev_env: WorkflowEnvironment, fresh_database_url: str,
                  tmp_path: Path, task_queue: str) -> AsyncIterator[tuple[Settings, Queues]]:
    """Orchestration and sandbox workers in this process, on queues of this test's own."""
    settings = isolated_settings(tmp_path / "assay", task_queue)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        yield settings, queues_from(settings)


async def test_example_plan_runs_end_to_end(dev_env: WorkflowEnvironment, fresh_database_url: str,
                                            workers: tuple[Settings, Queues]) -> None:
    settings, queues = workers
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    req = load_plan(EXAMPLE, max_bytes=settings.max_plan_bytes, queues=queues,
                    store=store_of(settings))
    run_id = await client.start_run(req, again=True)
    result = report_of(await client.result(run_id))

    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    assert result.tasks[0].task_id == "1"
    assert all(t.provenance.execution.attempts == 1 for t in result.tasks)
    comparison = next(t for t in result.tasks if t.task_id == "2")
    assert comparison.metrics["p_value"] < 0.05
    assert {c.check.metric for c in comparison.checks if c.passed} >= {"p_value"}

    assert result.report is not None
    saved = json.loads(Path(result.report.results_json).read_text())
    assert req.plan is not None
    assert saved["run_id"] == run_id and len(saved["tasks"]) == len(req.plan.decisions)
    summary = Path(result.report.summary_md).read_text()
    assert f"`{run_id}`" in summary and "| HIGH | 2 | 2 | 100% |" in summary
    assert Path(result.report.summary_md).name.removeprefix("execution_summary_") == \
        Path(result.report.results_json).name.removeprefix("execution_results_")[:-5] + ".md"

    events = await stored_events(fresh_database_url, run_id)
    kinds = [(e.event.node_id, e.event.event_type, e.event.event_subtype) for e in events]
    assert kinds[0] == ("run", "checkpoint", "start")
    assert kinds[-1] == ("run", "checkpoint", "complete")
    assert kinds.count(("4", "code_exec", "start")) == 1

    async def listed() -> bool:
        found = await client.list_runs(f'WorkflowId="{run_id}" AND AssayStatus="completed"')
        return [r.run_id for r in found] == [run_id]

    await wait_for(listed, timeout=10, what="the run to be listed as completed")
    progress = await client.progress(run_id)
    assert progress.phase == "done" and set(progress.tasks.values()) == {"completed"}


async def test_starting_the_same_plan_twice_is_refused(
        dev_env: WorkflowEnvironment, workers: tuple[Settings, Queues]) -> None:
    from client.assay import RunExistsError

    settings, queues = workers
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    req = load_plan(EXAMPLE, max_bytes=settings.max_plan_bytes, queues=queues,
                    store=store_of(settings))
    req = req.model_copy(update={"plan_name": f"twice-{queues.orchestration}"})
    first = await client.start_run(req)
    with pytest.raises(RunExistsError, match="already exists"):
        await client.start_run(req)
    second = await client.start_run(req, again=True)
    assert second == f"{first}-r2"
    assert (await client.result(first)).status == "completed"
    assert (await client.result(second)).status == "completed"
