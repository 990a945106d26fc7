"""Search attributes set in one activation reach the server as one upsert, last value winning.

A real run on the time-skipping server: a task that runs out of memory, is patched and retried
moves through many phases, statuses and attempt counts, several at a time. Its history must
hold fewer upserts than the same path sent with one upsert per update, and its search
attributes must end as the task ended: the last value of each wins. A run started with its
kind, plan and status (as the client starts it), and a task (as its run starts it), do not
upsert them again.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from client.assay import AssayClient
from tests.histories.capture.upserts import DECISIONS
from tests.workflows.common.continued import ContinuedProbe
from tests.workflows.harness import Harness, task
from workflows.constants import (
    ATTEMPTS_KEY,
    KIND_KEY,
    PHASE_KEY,
    PLAN_KEY,
    STATUS_KEY,
    started_with,
    task_workflow_id,
)
from workflows.contracts.results import ResearchResult

UPSERT = EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
UNMERGED = 16
"""Upserts this task's path sent with one upsert per update (its saved history before 0.1.0,
``retries.task-oom``: out of memory above 32 at batch 64, patched, retried)."""


async def test_a_retried_tasks_updates_are_merged_and_end_as_the_task_ended(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    report = await harness.run(DECISIONS)
    retried = next(t for t in report.tasks if t.task_id == "b")
    assert retried.status == "completed" and "after patch" in retried.status_reason
    handle = time_env.client.get_workflow_handle(task_workflow_id(report.run_id, "b"))
    events = (await handle.fetch_history()).events
    kinds = [event.event_type for event in events]
    upserts = kinds.count(UPSERT)
    assert 0 < upserts < UNMERGED, upserts
    found = (await handle.describe()).typed_search_attributes
    assert found.get(STATUS_KEY) == "completed"
    assert retried.phases[-1].phase == "finalize" and found.get(PHASE_KEY) == "done"
    attempts = dict(item.split(":") for item in found.get(ATTEMPTS_KEY) or [])
    assert int(attempts["execute"]) == 2, attempts
    # the run sets its last status and phase and returns without waiting: the merged upsert
    # still reaches the server, ahead of the completion
    run = time_env.client.get_workflow_handle(report.run_id)
    ended = (await run.describe()).typed_search_attributes
    assert (ended.get(STATUS_KEY), ended.get(PHASE_KEY)) == ("completed", "done")
    kinds = [event.event_type for event in (await run.fetch_history()).events]
    assert kinds[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
    assert kinds[-2] == UPSERT


def _upserted(events: list[HistoryEvent]) -> list[dict[str, str]]:
    """Each upsert's fields, as the JSON text of their values."""
    return [{name: payload.data.decode() for name, payload in
             e.upsert_workflow_search_attributes_event_attributes.search_attributes
             .indexed_fields.items()} for e in events if e.event_type == UPSERT]


async def test_a_workflow_started_with_its_kind_and_status_does_not_upsert_them(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    client = AssayClient(time_env.client, task_queue=task_queue)
    req = harness.request([task("a")]).model_copy(
        update={"plan_name": f"settled-{uuid.uuid4().hex[:8]}"})
    async with harness.worker():
        run_id = await client.start_run(req)  # the client starts it with kind, plan, status
        result = await time_env.client.get_workflow_handle(
            run_id, result_type=ResearchResult).result()
    assert result.status == "completed"
    for workflow_id, kind in ((run_id, "run"), (task_workflow_id(run_id, "a"), "task")):
        handle = time_env.client.get_workflow_handle(workflow_id)
        upserts = _upserted(list((await handle.fetch_history()).events))
        # nothing sets what the workflow started with; the phases and the end still go out
        assert not [u for u in upserts if u.get(STATUS_KEY.name) == '"running"'], upserts
        assert not [u for u in upserts if KIND_KEY.name in u and len(u) <= 2
                    and u.get(STATUS_KEY.name) in (None, '"running"')], upserts
        assert any(u.get(PHASE_KEY.name) == '"done"' for u in upserts), upserts
        found = (await handle.describe()).typed_search_attributes
        assert (found.get(KIND_KEY), found.get(STATUS_KEY), found.get(PLAN_KEY)) == (
            kind, "completed", req.plan_name)


async def test_a_workflow_continued_as_new_upserts_what_it_carried_over(
        time_env: WorkflowEnvironment, task_queue: str) -> None:
    # a workflow of before the change that continued as new upserted its carried kind and
    # status; it still does, so its history replays with no patch
    workflow_id = f"continued-{uuid.uuid4().hex[:8]}"
    async with Worker(time_env.client, task_queue=task_queue, workflows=[ContinuedProbe]):
        handle = await time_env.client.start_workflow(
            ContinuedProbe.run, 1, id=workflow_id, task_queue=task_queue,
            search_attributes=started_with("study"))
        await time_env.client.get_workflow_handle(workflow_id).result()
    first = await time_env.client.get_workflow_handle(
        workflow_id, run_id=handle.first_execution_run_id).fetch_history()
    second = await time_env.client.get_workflow_handle(workflow_id).fetch_history()
    assert _upserted(list(first.events)) == []
    assert _upserted(list(second.events)) == [
        {KIND_KEY.name: '"study"', STATUS_KEY.name: '"running"'}]
