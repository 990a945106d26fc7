"""Human gates on the time-skipping server: decisions, refusals, timeouts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from activities.reflection.reflection import diagnose as diagnose_rules
from client.assay import AssayClient
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.contracts.gates import GateDecision, GateRecord
from workflows.contracts.reflection import DiagnoseInput, ReflectionNote, retry_decision
from workflows.contracts.results import ResearchResult, TaskProgress
from workflows.research.workflow import ResearchWorkflow

HOUR = 3600.0


def human(kind: str, **rule: Any) -> dict[str, Any]:
    return {"gates": {kind: {"human": True, **rule}}}


async def start(harness: Harness, decisions: list[dict[str, Any]], **policy: Any,
                ) -> WorkflowHandle[ResearchWorkflow, ResearchResult]:
    req = harness.request(decisions, **policy)
    return await harness.env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=harness.queue)


async def plan_gate_waiting(handle: WorkflowHandle[ResearchWorkflow, ResearchResult]) -> None:
    async def waiting() -> bool:
        return (await handle.query(ResearchWorkflow.progress)).waiting is not None
    await wait_for(waiting, timeout=20, what="the plan gate to open")


async def task_gate_waiting(child: WorkflowHandle[Any, Any], gate: str) -> None:
    async def waiting() -> bool:  # not found until the run starts the task's workflow
        progress = await child.query("progress", result_type=TaskProgress)
        return progress.waiting is not None and progress.waiting.gate == gate
    await wait_for(waiting, timeout=20, what=f"the {gate} gate to open")


async def test_plan_gate_approved_by_signal_after_a_refused_approver(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("plan", approvers=["ada"]))
        await plan_gate_waiting(handle)
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="eve"))
        await handle.signal("approve", GateDecision(gate="step", decision="approve", by="ada"))
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada",
                                                    comment="looks right"))
        result = await handle.result()
    assert result.status == "completed"
    (gate,) = result.gates
    assert (gate.status, gate.by, gate.comment) == ("approved", "ada", "looks right")
    assert gate.question.endswith("(1 task)?"), gate.question  # not "(1 tasks)?"
    assert any("'eve' may not decide" in r for r in gate.refused)
    assert any("the open gate is 'plan', not 'step'" in r for r in gate.refused)
    refused = [e for e in harness.sink.events.values() if e.status == "refused"]
    assert {e.agent_name for e in refused} == {"eve", "ada"}


async def test_plan_gate_rejected_by_update_cancels_every_task(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a"), task("b", deps=["a"])], **human("plan"))
        await plan_gate_waiting(handle)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                "decide", GateDecision(gate="result", decision="approve", by="ada"),
                result_type=GateRecord)
        assert "the open gate is 'plan', not 'result'" in str(refused.value.cause)
        record = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "decide", GateDecision(gate="plan", decision="reject", by="ada",
                                   comment="wrong dataset"), result_type=GateRecord)
        assert record.status == "rejected"
        result = await handle.result()
    assert result.status == "rejected"
    assert {t.status for t in result.tasks} == {"cancelled"}
    assert "plan gate rejected by ada: wrong dataset" in result.tasks[0].status_reason
    assert harness.sandbox.ran == []


@pytest.mark.parametrize(("action", "expected"), [("approve", "completed"),
                                                  ("reject", "rejected")])
async def test_plan_gate_timeout_follows_the_policy(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, action: str,
        expected: str) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a")], **human("plan", timeout_s=2 * HOUR,
                                                    on_timeout=action))
    assert result.status == expected
    assert result.gates[0].status == "timed_out"
    assert result.gates[0].by == f"policy:timeout->{action}"


async def test_step_gate_rejected_on_the_task_stops_it_before_running(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("step"))
        child = time_env.client.get_workflow_handle(f"{handle.id}.task-a")

        await task_gate_waiting(child, "step")
        await handle.signal("approve", GateDecision(gate="step", task_id="a",
                                                    decision="reject", by="ada",
                                                    comment="too expensive today"))
        result = harness.report_of(await handle.result())
    only = result.tasks[0]
    assert only.status == "rejected"
    assert only.status_reason == "step gate rejected by ada: too expensive today"
    assert harness.sandbox.ran == []
    assert only.provenance.approvals[0].by == "ada"


async def test_result_gate_approved_completes_the_task(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("result"))
        child = time_env.client.get_workflow_handle(f"{handle.id}.task-a")

        await task_gate_waiting(child, "result")
        record = await child.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "decide", GateDecision(
            gate="result", task_id="a", decision="approve", by="ada"), result_type=dict)
        assert record["status"] == "approved"
        result = harness.report_of(await handle.result())
    assert result.tasks[0].status == "completed"
    assert "result:ada" in result.tasks[0].provenance.approval.decided_by


@pytest.mark.parametrize("payload", [
    {"gate": "plan", "decision": "maybe", "by": "ada"},
    {"gate": "launch", "decision": "approve", "by": "ada"},
    {"gate": "plan", "decision": "approve"},
    {"gate": "plan", "decision": "approve", "by": "ada", "comment": "x" * 5000},
    {"gate": "plan", "decision": "approve", "by": "ada", "extra": "field"},
    ["not", "an", "object"],
    "approve",
])
async def test_malformed_signal_payloads_are_refused_and_recorded(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, payload: Any) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("plan"))
        await plan_gate_waiting(handle)
        await handle.signal("approve", payload)
        await handle.signal("approve", GateDecision(gate="plan", decision="approve", by="ada"))
        result = await handle.result()
    (gate,) = result.gates
    assert gate.status == "approved"
    assert len(gate.refused) == 1 and "malformed decision" in gate.refused[0]
    assert result.status == "completed"


def unsure_reflection(confidence: float) -> Callable[[DiagnoseInput], Awaitable[ReflectionNote]]:
    """Reflection that offers a real patch with a confidence the thresholds send to a person."""

    async def diagnose(req: DiagnoseInput) -> ReflectionNote:
        note = diagnose_rules(req)
        assert note.patch is not None
        patch = note.patch.model_copy(update={"confidence": confidence})
        return note.model_copy(update={"confidence": confidence, "patch": patch,
                                       "decision": retry_decision(confidence)})

    return diagnose


@pytest.mark.parametrize(("decision", "status"), [("approve", "completed"),
                                                  ("reject", "failed")])
async def test_error_gate_decides_a_low_confidence_patch(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        decision: Literal["approve", "reject"], status: str) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"diagnose_failure": unsure_reflection(0.6)})
    async with harness.worker():
        handle = await start(harness, [task("a", behave="oom_above:32", batch_size=64)],
                             **human("error"))
        child = time_env.client.get_workflow_handle(f"{handle.id}.task-a")

        await task_gate_waiting(child, "error")
        await handle.signal("approve", GateDecision(gate="error", task_id="a",
                                                    decision=decision, by="ada"))
        result = harness.report_of(await handle.result())
    only = result.tasks[0]
    assert only.status == status, only.status_reason
    assert only.provenance.approvals[0].gate == "error"
    (patch,) = only.provenance.patches
    assert patch.decision == "human"
    assert patch.outcome == ("applied" if decision == "approve" else "rejected")
    expected_runs = [64, 32] if decision == "approve" else [64]
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == expected_runs


async def test_low_confidence_patch_without_a_human_error_gate_is_deferred(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"diagnose_failure": unsure_reflection(0.6)})
    result = await harness.run([task("a", behave="oom_above:32", batch_size=64)])
    only = result.tasks[0]
    assert only.status == "deferred"
    assert "to ask for it" in only.status_reason  # "...the run has no error gate ... to ask for it"
    assert "next cycle" not in only.status_reason  # a plain run has no next cycle


async def test_a_malformed_decision_sent_while_the_run_waits_is_refused_naming_the_field(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    """``task`` for ``task_id``: refused at once, in the events, progress and details."""
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("result", approvers=["ada"]))
        child = time_env.client.get_workflow_handle(f"{handle.id}.task-a")
        await task_gate_waiting(child, "result")
        await handle.signal("approve", {"gate": "result", "decision": "approve", "by": "ada",
                                        "task": "a"})

        def refusals() -> list[str]:
            return [str(e.outputs.get("reason")) for e in harness.sink.events.values()
                    if e.status == "refused"]

        async def recorded() -> bool:  # written while the run still waits, not at its end
            return bool(refusals())
        await wait_for(recorded, timeout=20, what="the refusal in the event store")
        assert "unknown field 'task' (did you mean 'task_id'?" in refusals()[0]
        progress = await handle.query(ResearchWorkflow.progress)
        assert progress.tasks["a"] == "running" and len(progress.refused) == 1
        assert progress.refused[0].startswith("ada: malformed decision: unknown field 'task'")
        details = (await handle.query("__temporal_workflow_metadata",
                                      result_type=WorkflowMetadata)).current_details
        assert "Latest refused decision (1 so far): ada: malformed decision" in details
        assert "Tasks: 1 running; running: a (a task that waits for a person" in details
        waits = (await child.query("__temporal_workflow_metadata",
                                   result_type=WorkflowMetadata)).current_details
        assert "Task status: **running**" in waits and "Task a: phase **human_gate**" in waits
        assert "**Waiting** at the result gate since" in waits and "for ada (then" in waits
        await handle.signal("approve", GateDecision(gate="result", task_id="a",
                                                    decision="approve", by="ada",
                                                    comment="checked", channel="cli"))
        report = harness.report_of(await handle.result())
    (gate,) = report.tasks[0].provenance.approvals
    assert (gate.status, gate.by, gate.comment, gate.channel) == (
        "approved", "ada", "checked", "cli")
    assert gate.decided_text().startswith('approved by ada via cli, ')
    assert gate.decided_text().endswith('UTC: "checked"')


async def test_a_decision_sent_from_python_is_recorded_as_such(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, [task("a")], **human("plan"))
        await plan_gate_waiting(handle)
        record = await AssayClient(time_env.client, task_queue=task_queue).decide(
            handle.id, GateDecision(gate="plan", decision="approve", by="ada", comment="ok"))
        result = await handle.result()
    assert record.channel == "python" and result.gates[0].channel == "python"
    person = result.gates[0].person()
    assert person is not None and (person.by, person.comment) == ("ada", "ok")
