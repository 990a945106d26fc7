"""``temporal workflow reset`` of a finished run, on the dev server with real workers and sandbox.

The reset execution re-runs the run from the point it was reset to: its jobs run in working
directories of its own, its events are its own (none of the first execution's is doubled or
lost), it writes a report of its own, and ``assay runs`` and ``assay watch`` tell the two
executions apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from activities.events.store import EventStore
from client.assay import AssayClient
from client.runs import short_execution
from tests.support.e2e import (
    EXAMPLE,
    isolated_settings,
    pools_serving,
    report_of,
    reset_run,
    store_of,
)
from tests.support.waiting import wait_for
from workers.cli.show import run_row
from workers.cli.watch import watch_run
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.settings import Settings
from workflows.contracts.policy import Queues
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration


@pytest.fixture
async def workers(dev_env: WorkflowEnvironment, fresh_database_url: str,
                  tmp_path: Path, task_queue: str) -> AsyncIterator[tuple[Settings, Queues]]:
    """Every pool in this process, on queues of this test's own."""
    settings = isolated_settings(tmp_path / "assay", task_queue)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        yield settings, queues_from(settings)


def workspaces(report: RunReport) -> set[Path]:
    """The working directories the report's jobs ran in."""
    return {Path(t.execution.workspace) for t in report.tasks if t.execution is not None}


async def finished_run(client: AssayClient, settings: Settings, queues: Queues,
                       ) -> tuple[str, str, RunReport]:
    """The example plan run to its end: its run id, its execution and its report."""
    req = load_plan(EXAMPLE, max_bytes=settings.max_plan_bytes, queues=queues,
                    store=store_of(settings))
    req = req.model_copy(update={"plan_name": f"reset-{queues.orchestration}"})
    run_id = await client.start_run(req)
    first = (await client.handle(run_id).describe()).run_id
    before = report_of(await client.result(run_id))
    assert before.status == "completed"
    return run_id, first, before


async def test_a_reset_run_reruns_into_its_own_directories_events_and_report(
        dev_env: WorkflowEnvironment, fresh_database_url: str,
        workers: tuple[Settings, Queues]) -> None:
    settings, queues = workers
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    run_id, first, before = await finished_run(client, settings, queues)
    async with EventStore(fresh_database_url) as store:
        counted = await store.count(run_id)

        execution, point = await reset_run(client.client, run_id, first)
        after = report_of(await client.handle(run_id, execution).result())

        assert after.status == "completed" and execution != first
        assert await store.executions(run_id) == {first: counted, execution: counted}, \
            "each execution has the run's events once: none doubled, none lost"
        stored = await store.events_after(run_id, 0, limit=10_000)
        assert all(n == 1 for n in Counter((e.event.execution, e.event.id)
                                           for e in stored).values())

        lines: list[str] = []
        await watch_run(client, store, run_id, follow=False, as_json=False, echo=lines.append)
    said = [line for line in lines if "reset:" in line]
    assert len(said) == 1 and said[0].endswith(
        f"reset: a new execution {short_execution(execution)} started from event {point}")
    assert lines.index(said[0]) == counted, "the reset's line comes where its events begin"

    old, new = workspaces(before), workspaces(after)
    assert len(old) == len(new) == len(before.tasks) and not old & new
    assert all(p.is_dir() and re.fullmatch(r"attempt-1-[0-9a-f]{12}", p.name)
               for p in old | new), "the first execution's directories are kept, not re-used"
    assert before.report is not None and after.report is not None
    first_json, reset_json = Path(before.report.results_json), Path(after.report.results_json)
    assert first_json.parent == settings.runs_dir / run_id
    assert reset_json.parent == first_json.parent / f"reset-{short_execution(execution)}"
    assert report_of(await client.handle(run_id, first).result()).execution == first, \
        "the first execution's report is still its own"
    assert after.execution == execution and after.first_execution == first

    async def listed() -> bool:
        found = await client.list_runs(f'WorkflowId="{run_id}" AND AssayStatus="completed"')
        return sorted(s.execution for s in found) == sorted([first, execution])

    await wait_for(listed, timeout=10, what="both executions to be listed")
    summaries = [await client.task_counts(s)
                 for s in await client.list_runs(f'WorkflowId="{run_id}"')]
    rows = [run_row(s, datetime.now(UTC), execution=True) for s in summaries]
    assert sorted(row[0] for row in rows) == sorted(
        f"{run_id} @{short_execution(e)}" for e in (first, execution))
    assert all(s.tasks is not None and s.tasks.completed == len(before.tasks) for s in summaries)


async def test_a_run_reset_to_a_later_point_reruns_only_what_follows(
        dev_env: WorkflowEnvironment, fresh_database_url: str,
        workers: tuple[Settings, Queues]) -> None:
    settings, queues = workers
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    run_id, first, before = await finished_run(client, settings, queues)
    async with EventStore(fresh_database_url) as store:
        counted = await store.count(run_id)
        execution, _ = await reset_run(  # once task 1 has completed
            client.client, run_id, first,
            after=EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
        after = report_of(await client.handle(run_id, execution).result())
        assert after.status == "completed"
        stored = await store.events_after(run_id, 0, limit=10_000)
        assert await store.count(run_id, first) == counted, "the first execution's are kept"

    ids = Counter(e.event.id for e in stored)
    assert all(n == 1 for n in ids.values()), "no event is written twice, in any execution"
    again = [e.event for e in stored if e.event.execution == execution]
    assert 0 < len(again) < counted
    kinds = Counter((e.node_id, e.event_type, e.event_subtype) for e in again)
    assert kinds[("1", "code_exec", "start")] == 0, "task 1 ended before the point: kept"
    assert kinds[("4", "code_exec", "start")] == 1
    assert kinds[("run", "checkpoint", "complete")] == 1

    old = {t.task_id: t.execution.workspace for t in before.tasks if t.execution}
    new = {t.task_id: t.execution.workspace for t in after.tasks if t.execution}
    assert new["1"] == old["1"] and all(new[t] != old[t] for t in ("2", "3", "4"))
    assert after.report is not None and Path(after.report.results_json).parent.name == \
        f"reset-{short_execution(execution)}"
