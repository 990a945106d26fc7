"""What callers send a gate is bounded; refused decisions are recorded, named and final."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import plan_gate_waiting, start, task_gate_waiting
from tests.workflows.harness import Harness, task
from workflows.common.bounds import bounded
from workflows.contracts.errors import ErrorType
from workflows.contracts.gates import (
    DECISION_MAX_BYTES,
    REFUSAL_CHARS,
    REFUSAL_EVENTS,
    REFUSALS_KEPT,
    GateDecision,
    GateRecord,
)
from workflows.contracts.plaintext import clip
from workflows.contracts.plan import Plan
from workflows.contracts.results import ResearchResult, RunProgress, SuppliedPlan
from workflows.research.planning import SUPPLIED_PLAN_MAX_BYTES
from workflows.research.workflow import ResearchWorkflow

MB = 1_000_000
PLAN_GATE = {"gates": {"plan": {"human": True, "approvers": ["ada"]}}}
RunHandle = WorkflowHandle[ResearchWorkflow, ResearchResult]


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def raw_json(data: bytes) -> RawValue:
    """A payload as a client that does not use Assay's converter may send it."""
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))


def test_clip_and_bounded_keep_text_short() -> None:
    assert clip("short", 10) == "short"
    cut = clip("x" * 5000, 100)
    assert cut == "x" * 88 + "…[4912 more]"  # 100 characters, 88 + 4912 = 5000 said
    assert bounded({"a": 1}, 100) == {"a": 1}
    assert len(bounded({"a": "x" * MB}, 100)) <= 100
    assert bounded(deep(5000), 100) == "<not JSON, or nested too deeply to show>"


def test_the_largest_valid_decision_is_under_the_size_limit() -> None:
    # four bytes a character: control characters, which JSON writes in six, are not kept
    widest = GateDecision(gate="result", task_id="t" * 64, decision="reject",
                          by="\U0001f600" * 128, comment="\U0001f600" * 4000)
    assert len(widest.model_dump_json().encode()) < DECISION_MAX_BYTES


async def update_refusal(handle: WorkflowHandle[Any, Any], update: str,
                         payload: Any) -> ApplicationError:
    """Send an update that must be refused; return the error the caller gets."""
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await handle.execute_update(update, payload,  # pyright: ignore[reportUnknownMemberType]
                                    result_type=GateRecord)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    return cause


async def test_oversize_approve_signals_do_not_wedge_the_run(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """The dev server enforces Temporal's 2 MB payload limit, as a deployment does."""
    harness = Harness(dev_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **PLAN_GATE)
        await plan_gate_waiting(handle)
        for field in ("by", "by", "by", "comment", "gate"):  # 4.5 MB of refusals
            await handle.signal("approve", {"gate": "plan", "decision": "approve",
                                            "by": "ada", field: "x" * (9 * MB // 10)})
        waiting = (await handle.query(ResearchWorkflow.progress)).waiting
        assert waiting is not None and waiting.refused_count == 5
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed"
    (gate,) = result.gates
    assert all(len(line) <= REFUSAL_CHARS and f"over the {DECISION_MAX_BYTES:,}-byte" in line
               for line in gate.refused)
    refusals = [e for e in harness.sink.events.values() if e.status == "refused"]
    assert len(refusals) == 5 and all(len(e.model_dump_json()) < 5000 for e in refusals)


async def test_a_gate_keeps_only_its_latest_refusals_and_counts_all(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **PLAN_GATE)
        await plan_gate_waiting(handle)
        for n in range(REFUSALS_KEPT + 30):
            await handle.signal("approve", GateDecision(gate="plan", decision="approve",
                                                        by=f"eve{n}"))
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        result = await handle.result()
    (gate,) = result.gates
    assert gate.refused_count == REFUSALS_KEPT + 30
    assert len(gate.refused) == REFUSALS_KEPT and gate.refused[-1].startswith("eve49: ")
    refusals = [e for e in harness.sink.events.values() if e.status == "refused"]
    assert len(refusals) == REFUSAL_EVENTS  # the first ones; the rest are counted
    settled = next(e for e in harness.sink.events.values() if e.status == "approved")
    assert settled.outputs["refused"] == REFUSALS_KEPT + 30


async def test_undecodable_signals_are_refused_and_recorded_not_dropped(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **PLAN_GATE)
        await plan_gate_waiting(handle)
        await handle.signal("approve", raw_json(b"[" * 5000 + b"]" * 5000))
        await handle.signal("approve", raw_json(b"{not json"))
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        result = await handle.result()
    (gate,) = result.gates
    assert gate.refused_count == 2
    assert all("the decision cannot be decoded as JSON" in line for line in gate.refused)


@pytest.mark.parametrize(("payload", "said"), [
    ({"gate": "plan", "decision": "approve", "by": "eve"}, "'eve' may not decide"),
    ({"gate": "step", "decision": "approve", "by": "ada"}, "the open gate is 'plan'"),
    ({"gate": "plan", "decision": "approve", "by": "ada", "task_id": "a"},
     "task gates are decided on the task's workflow"),
    ({"gate": "plan", "decision": "maybe", "by": "mallory"}, "malformed decision: decision"),
])
async def test_a_refused_decide_is_recorded_and_final(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, payload: dict[str, Any],
        said: str) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **PLAN_GATE)
        await plan_gate_waiting(handle)
        refused = await update_refusal(handle, "decide", payload)
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        result = await handle.result()
    assert refused.type == ErrorType.GATE_REFUSED and refused.non_retryable
    assert said in refused.message
    assert (f"waits for a decision by one of: ada: `assay approve {handle.id} --gate plan "
            "--by ada`") in refused.message
    (event,) = [e for e in harness.sink.events.values() if e.status == "refused"]
    assert event.event_type == "approval" and event.agent_name == payload["by"]
    assert said in event.outputs["reason"]
    assert result.gates[0].refused_count == 1


async def test_a_refused_decide_on_a_task_names_the_task_gate_command(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], gates={"step": {"human": True}})
        child = time_env.client.get_workflow_handle(f"{handle.id}.task-a")
        await task_gate_waiting(child, "step")
        refused = await update_refusal(child, "decide", {"gate": "result", "task_id": "a",
                                                         "decision": "approve", "by": "ada"})
        await handle.signal("approve", GateDecision(gate="step", task_id="a",
                                                    decision="approve", by="ada"))
        await handle.result()
        (step,) = await child.query("gates_list", result_type=list[GateRecord])
    assert refused.non_retryable and "the open gate is 'step', not 'result'" in refused.message
    assert f"`assay approve {handle.id} --gate step --task a --by NAME`" in refused.message
    assert (step.status, step.refused_count) == ("approved", 1)
    refusals = [e for e in harness.sink.events.values() if e.status == "refused"]
    assert [e.node_id for e in refusals] == ["a"]


async def test_an_oversize_decide_is_refused_unread_and_never_stored(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **PLAN_GATE)
        await plan_gate_waiting(handle)
        refused = await update_refusal(handle, "decide", {"gate": "plan", "decision": "approve",
                                                          "by": "x" * MB})
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        await handle.result()
        history = await handle.fetch_history()
    assert refused.non_retryable and refused.type == ErrorType.GATE_REFUSED
    assert f"over the {DECISION_MAX_BYTES:,}-byte limit" in refused.message
    assert "it was not read" in refused.message
    assert history.to_json().count("x" * 1000) == 0  # the validator kept it out of history


async def goal_waiting_for_a_plan(harness: Harness) -> RunHandle:
    req = harness.goal_request("goal", agents={"no_model": "wait"})
    handle = await harness.env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                     task_queue=harness.queue)

    async def waiting() -> bool:
        return (await handle.query(ResearchWorkflow.progress)).status == "waiting"

    await wait_for(waiting, timeout=20, what="the goal run to wait for a plan")
    return handle


@pytest.mark.parametrize(("payload", "said"), [
    ({"plan_name": "p", "plan_sha256": "2" * 64,
      "plan": {"decisions": "x" * SUPPLIED_PLAN_MAX_BYTES}},
     f"over the {SUPPLIED_PLAN_MAX_BYTES:,}-byte limit"),
    ({"plan_name": "p", "plan_sha256": "2" * 64, "plan": {"decisions": []}},
     "invalid plan: plan.decisions"),
    ({"plan_name": "p", "plan_sha256": "2" * 64, "by": "b" * 500,
      "plan": {"decisions": [task("a")]}}, "by: give a name of at most 128"),
    ("not a plan", "invalid plan: payload"),
])
async def test_a_refused_plan_is_final_and_says_why(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, payload: Any,
        said: str) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await goal_waiting_for_a_plan(harness)
        refused = await update_refusal(handle, "supply_plan", payload)
        plan = Plan.model_validate({"decisions": [task("a")]})
        await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "supply_plan", SuppliedPlan(plan_name="p", plan_sha256="2" * 64, plan=plan,
                                        by="ada"), result_type=RunProgress)
        result = await handle.result()
    assert refused.type == ErrorType.PLAN_REFUSED and refused.non_retryable
    assert said in refused.message
    assert result.status == "completed"
