"""What Temporal itself shows of a run: current details, wait summaries, refusals, outcome.

A real run on the dev server, read through Temporal's API as the Web UI reads it: the
``__temporal_workflow_metadata`` query (current details), the history's timer and marker
summaries, the description's search attributes and a list query on ``AssayStatus``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from client.assay import DATA_CONVERTER
from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import human, plan_gate_waiting, start
from tests.workflows.harness import Harness, task
from workflows.common.details import span, wait_summary, who_may
from workflows.constants import STATUS_KEY
from workflows.contracts.gates import GateDecision

pytestmark = pytest.mark.integration
WEEK = 7 * 86_400


def test_waits_read_as_people_say_them() -> None:
    assert [span(s) for s in (45, 90, 1800, 3600, 36 * 3600, WEEK)] == [
        "45 s", "90 s", "30 min", "1 h", "36 h", "7 d"]
    assert who_may([]) == "anyone" and who_may(["ada", "bob"]) == "ada or bob"
    assert wait_summary("plan gate", ["ada"], WEEK) == "plan gate: waiting for ada, 7 d"


async def details(handle: WorkflowHandle[Any, Any]) -> str:
    """A workflow's current details, as the Web UI reads them."""
    answer = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return answer.current_details


def summaries(events: list[HistoryEvent], kind: EventType.ValueType) -> list[str]:
    """The user-metadata summaries of the history's events of ``kind``."""
    return [DATA_CONVERTER.payload_converter.from_payload(e.user_metadata.summary, str)
            for e in events if e.event_type == kind and e.user_metadata.summary.data]


async def listed_as(client: Client, run_id: str, status: str) -> bool:
    """Whether the list query of the documented saved view finds the run."""
    query = f'WorkflowId = "{run_id}" AND AssayStatus = "{status}"'
    return [w.id async for w in client.list_workflows(query)] == [run_id]


async def test_a_run_tells_temporal_what_it_waits_for_who_decides_and_how_it_ended(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("bad", behave="crash")],
                             **human("plan", approvers=["ada"], timeout_s=WEEK))
        await plan_gate_waiting(handle)
        waiting = await details(handle)
        assert "**Waiting** at the plan gate since" in waiting and "for ada" in waiting
        assert f"assay approve {handle.id} --gate plan --by ada" in waiting
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="eve"))

        async def refused() -> bool:
            return "Latest refused decision" in await details(handle)
        await wait_for(refused, timeout=20, what="the refusal in the details")
        await handle.signal("approve", {"gate": "plan", "decision": "approve", "by": "ada",
                                        "comment": "go"})
        result = await handle.result()
        ended = await details(handle)  # a query of an ended run replays it on a worker
    assert result.status == "failed"
    assert result.gates[0].channel == "temporal" and result.gates[0].comment == "go"

    described = await handle.describe()
    assert described.status == WorkflowExecutionStatus.COMPLETED  # Temporal's word ...
    assert described.typed_search_attributes.get(STATUS_KEY) == "failed"  # ... and Assay's
    assert ended.startswith("Run ") and "**Assay outcome: failed**" in ended
    assert 'plan gate approved by ada via temporal, ' in ended
    await wait_for(lambda: listed_as(dev_env.client, handle.id, "failed"), timeout=30,
                   what="the run under AssayStatus = failed")

    events = [e async for e in handle.fetch_history_events()]
    assert summaries(events, EventType.EVENT_TYPE_TIMER_STARTED) == [
        "plan gate: waiting for ada, 7 d"]
    marked = summaries(events, EventType.EVENT_TYPE_MARKER_RECORDED)
    assert any(s.startswith("refused decision: eve: 'eve' may not decide the plan gate")
               for s in marked), marked
