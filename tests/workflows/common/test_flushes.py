"""Events are written before a workflow waits for something slow, and none is lost.

Real runs on the time-skipping server. A task whose panel is deterministic reviewers only
writes its events before its job, not also before each panel (a few milliseconds), and every
event still arrives once, each workflow's numbered without a gap.
With model reviewers the events are written after the deterministic panel, before the first
model call (which takes seconds). A task that ends while the run writes its events (a write
can take long: the database is slow or gone for a while and the write is retried) still moves
the run on.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.all import run_goal
from tests.histories.capture.upserts import DECISIONS
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.constants import task_workflow_id
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome, RecordEventsInput
from workflows.research.workflow import ResearchWorkflow

MARKER = EventType.EVENT_TYPE_MARKER_RECORDED
SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
CHILD_DONE = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED


def _local(event: HistoryEvent) -> str:
    """The local activity a marker records (empty for any other event)."""
    attrs = event.marker_recorded_event_attributes
    if event.event_type != MARKER or attrs.marker_name != "core_local_activity":
        return ""
    return json.loads(attrs.details["data"].payloads[0].data)["activity_type"]


def _kinds(history: list[HistoryEvent]) -> list[str]:
    """The local activities and activities a history ran, in order."""
    kinds = [(_local(e) or (e.activity_task_scheduled_event_attributes.activity_type.name
                            if e.event_type == SCHEDULED else "")) for e in history]
    return [k for k in kinds if k]


async def test_deterministic_panels_add_no_flush_and_every_event_arrives_once(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    report = await harness.run(DECISIONS)
    assert [t.status for t in report.tasks] == ["completed", "completed"]
    for tid, panels in (("a", 1), ("b", 2)):  # b: out of memory, patched, reviewed again
        handle = time_env.client.get_workflow_handle(task_workflow_id(report.run_id, tid))
        kinds = _kinds(list((await handle.fetch_history()).events))
        starts = [i for i, kind in enumerate(kinds) if kind == "review_ops"]
        assert len(starts) == panels, (tid, kinds)
        for start in starts:  # no flush before the panel; one before the job it passes
            assert start == 0 or kinds[start - 1] != "record_events", (tid, kinds)
            job = kinds.index("execute_job", start)
            assert "record_events" in kinds[start:job], (tid, kinds)
    orders: dict[str, list[int]] = defaultdict(list)
    for event in harness.sink.events.values():
        orders[event.node_id].append(event.execution_order)
    assert set(orders) == {"run", "a", "b"}
    for node, seen in orders.items():  # nothing lost: each workflow's events 1..n, no gap
        assert sorted(seen) == list(range(1, len(seen) + 1)), node
    verdicts = [e for e in harness.sink.events.values()
                if e.node_id == "b" and e.agent_name in ("ops", "quality_safety", "infrastructure")]
    assert len(verdicts) == 6, "both panels' verdicts are recorded"


async def test_events_are_written_before_the_model_reviewers_are_called(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    result = await run_goal(time_env, tmp_path)
    (first, *_) = result.tasks
    handle = time_env.client.get_workflow_handle(task_workflow_id(result.run_id, first.task_id))
    kinds = _kinds(list((await handle.fetch_history()).events))
    panel = kinds.index("review_ops")
    model = kinds.index("review_job_model")
    assert "record_events" in kinds[panel:model], kinds
    assert kinds[panel - 1] != "record_events", "no flush of its own before the panel"


async def test_a_task_that_ends_while_the_run_writes_its_events_still_moves_the_run_on(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    # a and b run side by side; when a ends, the run writes its events before it waits for b,
    # and that write is held until b's end has reached the run (a workflow task of the run
    # that started after b's completion: with a long local activity, the worker heartbeats
    # the run's workflow task and the server hands it the new events)
    writing = asyncio.Event()
    harness: Harness

    def ended(batch: RecordEventsInput, tid: str) -> bool:
        return any(e.node_id == "run" and (e.event_type, e.event_subtype) == ("handoff",
                   "complete") and e.inputs.get("task_id") == tid for e in batch.events)

    async def b_reached_the_run() -> bool:
        events = (await time_env.client.get_workflow_handle(req.run_id).fetch_history()).events
        done = [i for i, e in enumerate(events) if e.event_type == CHILD_DONE
                and e.child_workflow_execution_completed_event_attributes.workflow_execution
                .workflow_id == task_workflow_id(req.run_id, "b")]
        return bool(done) and any(e.event_type == TASK_STARTED for e in events[done[0]:])

    async def record(batch: RecordEventsInput) -> int:
        if ended(batch, "a") and not writing.is_set():
            writing.set()
            await wait_for(b_reached_the_run, timeout=30, what="b's end reaching the run")
        return await harness.sink.record(batch)

    async def execute(job: ExecuteJobInput) -> ExecutionOutcome:
        if job.task_id == "b":  # b ends only once the run writes a's end
            await writing.wait()
        return await harness.sandbox.execute(job)

    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"record_events": record, "execute_job": execute})
    req = harness.request([task("a"), task("b")], max_parallel=2)
    async with harness.worker():
        result = await asyncio.wait_for(time_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue,
            task_timeout=timedelta(seconds=2)), timeout=60)
    assert writing.is_set()
    assert [(t.task_id, t.status) for t in result.tasks] == [("a", "completed"),
                                                             ("b", "completed")]
