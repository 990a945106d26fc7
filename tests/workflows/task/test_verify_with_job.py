"""The job's dispatch verifies its evidence; verification stays the task's own step.

A sandbox worker that can verify (``verify_with_job``: the fake sandbox with the worker's own
``verify_evidence``, as ``workers.pools.builders`` wires the real one) answers the task's verify
step from the job's dispatch: no second dispatch, the same phase, attempt, event and outcome.
Whatever it could not verify the task verifies in a dispatch of its own, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from tests.workflows.task.test_task_pipeline import broken_verifier
from workflows.constants import task_workflow_id
from workflows.contracts.results import RunReport

SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED


async def _dispatches(env: WorkflowEnvironment, run_id: str, tid: str) -> list[str]:
    """The activity types task ``tid`` of run ``run_id`` scheduled, in order."""
    history = await env.client.get_workflow_handle(task_workflow_id(run_id, tid)).fetch_history()
    return [e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events if e.event_type == SCHEDULED]


async def _run(env: WorkflowEnvironment, root: Path, decision: dict[str, Any], *,
               together: bool, **kwargs: Any) -> tuple[RunReport, Harness]:
    harness = Harness(env, f"verify-{together}-{root.name}", root / str(together),
                      verify_with_job=together, **kwargs)
    return await harness.run([decision]), harness


def _verifier_events(harness: Harness) -> list[tuple[str, str]]:
    return [(e.event_type, e.status) for e in harness.sink.events.values()
            if e.agent_name == "verifier"]


async def test_the_job_dispatch_verifies_the_evidence_as_the_verify_step(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report, harness = await _run(time_env, tmp_path, task("a"), together=True)
    (only,) = report.tasks
    assert only.status == "completed" and only.status_reason == "approved + evidence verified"
    assert [a.name for a in only.artifacts] == ["out.txt"]
    assert harness.result is not None
    dispatches = await _dispatches(time_env, harness.result.run_id, "a")
    assert "execute_job" in dispatches and "verify_evidence" not in dispatches
    # still a step of its own: its phase, its attempt, its event
    assert "verify" in [p.phase for p in only.phases]
    assert only.provenance.verification.attempts == 1
    assert _verifier_events(harness) == [("tool_call", "pass")]
    assert only.execution is not None and only.execution.verification is None


async def test_a_check_the_job_dispatch_finds_failing_ends_the_task_as_before(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    decision = task("a", checks=[{"metric": "score", "op": ">=", "value": 0.95}])
    before, _ = await _run(time_env, tmp_path, decision, together=False)
    after, harness = await _run(time_env, tmp_path, decision, together=True)
    assert after.tasks[0].status == before.tasks[0].status == "failed"
    assert after.tasks[0].status_reason == before.tasks[0].status_reason
    assert "acceptance criteria not met" in after.tasks[0].status_reason
    assert harness.result is not None
    assert "verify_evidence" not in await _dispatches(time_env, harness.result.run_id, "a")
    assert _verifier_events(harness) == [("tool_call", "fail")]


async def test_relinked_evidence_is_verified_in_a_dispatch_of_its_own(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report, harness = await _run(time_env, tmp_path, task("a", behave="misplaced"),
                                 together=True)
    (only,) = report.tasks
    assert only.status == "completed"
    assert harness.sandbox.ran == [only.task_id]  # re-linked, never run again
    assert harness.result is not None
    dispatches = await _dispatches(time_env, harness.result.run_id, "a")
    assert dispatches.count("verify_evidence") == 1  # the second check, after the re-scan
    assert dispatches.index("rescan_artifacts") < dispatches.index("verify_evidence")
    assert only.provenance.verification.attempts == 2


async def test_a_verifier_failing_in_the_job_dispatch_is_retried_on_its_own(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report, harness = await _run(time_env, tmp_path, task("a"), together=True,
                                 overrides={"verify_evidence": broken_verifier})
    (only,) = report.tasks
    assert only.status == "failed"
    assert "the evidence could not be checked: Broken: the evidence store is unreachable" in \
        only.status_reason
    assert harness.sandbox.ran == ["a"]  # the job ran once
    assert harness.result is not None
    assert (await _dispatches(time_env, harness.result.run_id, "a")).count(
        "verify_evidence") == 1
