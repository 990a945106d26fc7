"""The sandbox's long activities are called with a heartbeat, and verification with time for
its artifacts, so a worker that dies mid-call is noticed within seconds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from workflows.constants import task_workflow_id
from workflows.contracts.execution import Artifact, ExecutionOutcome
from workflows.task.calls import EVIDENCE_BASE, evidence_timeout


def test_verification_gets_time_for_the_artifacts_it_reads_back() -> None:
    big = ExecutionOutcome(outcome="succeeded", artifacts=[
        Artifact(name=f"part-{i}", size=1 << 30, sha256="0" * 64, path="") for i in range(4)])
    assert evidence_timeout(ExecutionOutcome(outcome="succeeded")) == EVIDENCE_BASE
    assert evidence_timeout(big) == EVIDENCE_BASE + timedelta(seconds=(4 << 30) / (20 << 20))


async def test_verify_and_rescan_are_scheduled_with_the_runs_heartbeat(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    report = await harness.run([task("a", behave="misplaced")], heartbeat_timeout_s=9)
    assert report.tasks[0].status == "completed", report.tasks[0].status_reason
    history = await time_env.client.get_workflow_handle(
        task_workflow_id(report.run_id, "a")).fetch_history()
    scheduled = {e.activity_task_scheduled_event_attributes.activity_type.name:
                 e.activity_task_scheduled_event_attributes
                 for e in history.events if e.HasField("activity_task_scheduled_event_attributes")}
    for name in ("execute_job", "verify_evidence", "rescan_artifacts"):
        assert scheduled[name].heartbeat_timeout.ToTimedelta() == timedelta(seconds=9), name
    assert scheduled["verify_evidence"].start_to_close_timeout.ToTimedelta() >= EVIDENCE_BASE
