"""The executive pipeline's paths: review, retries with patches, re-linking, reflection misses."""

from __future__ import annotations

from pathlib import Path

from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from workflows.contracts.execution import RecordEventsInput, Verification, VerifyEvidenceInput
from workflows.contracts.results import ReportPaths, WriteReportInput
from workflows.contracts.skills import HandOffAnswer, HandOffInput

UNSAFE = "import socket\nsocket.create_connection(('example.org', 80))\n"


async def test_out_of_memory_is_patched_to_a_smaller_batch_and_completes(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="oom_above:32", batch_size=64)])
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 32]
    (patch,) = only.provenance.patches
    assert patch.root_cause == "out_of_memory" and patch.outcome == "applied"
    assert [(c.field, c.old_value, c.new_value) for c in patch.changes] == [
        ("args.batch_size", 64, 32)]
    assert patch.confidence >= 0.85 and len(patch.sha256) == 64
    assert only.provenance.execution.attempts == 2
    assert f"after patch {patch.patch_id}" in only.status_reason
    assert only.reflections[0].root_cause == "out_of_memory"


async def test_out_of_memory_that_persists_ends_failed_retry(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="oom_above:1", batch_size=64)])
    only = result.tasks[0]
    assert only.status == "failed_retry"
    # out of memory is a configuration failure: three retries, each a smaller batch
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 32, 16, 8]
    assert "retries exhausted" in only.status_reason
    assert "configuration failure (out_of_memory): its 3 retries" in only.status_reason


async def test_a_policy_number_of_retries_holds_for_every_failure(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="oom_above:1", batch_size=64)],
                               max_retries=2)
    only = result.tasks[0]
    assert only.status == "failed_retry"
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 32, 16]
    assert only.status_reason.endswith("retries exhausted")


async def test_unsafe_code_is_rejected_by_quality_and_safety_and_never_runs(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", code=UNSAFE), task("b", deps=["a"])])
    rejected, blocked = result.tasks
    assert rejected.status == "rejected"
    assert "quality_safety" in rejected.status_reason and "line 2" in rejected.status_reason
    assert harness.sandbox.ran == []
    verdicts = {v.reviewer: v.verdict for v in rejected.verdicts}
    assert verdicts["quality_safety"] == "REJECT"
    assert blocked.status == "blocked" and "task a" in blocked.status_reason


async def test_misplaced_artifact_is_relinked_without_running_again(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="misplaced")])
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert harness.sandbox.ran == ["a"]
    assert only.provenance.verification.attempts == 2
    assert [a.name for a in only.artifacts] == ["out.txt"]


async def test_missing_artifact_ends_failed_final_after_the_retries(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="no_artifact")])
    only = result.tasks[0]
    assert only.status == "failed_final"
    assert "'out.txt' was not produced" in only.status_reason
    # missing evidence is a configuration failure: three re-scans after the first check
    assert only.provenance.verification.attempts == 4
    assert "after 3 retries; configuration failure (verification)" in only.status_reason
    assert harness.sandbox.ran == ["a"]


async def test_without_reflection_the_task_proceeds_unpatched_and_records_the_miss(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task("a", behave="oom_above:1", batch_size=8)],
                          reflection_timeout_s=3)
    req.queues.reflection = f"{task_queue}-nobody-serves-this"
    async with harness.worker():
        from workflows.research.workflow import ResearchWorkflow

        result = harness.report_of(await time_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue))
    only = result.tasks[0]
    assert only.status == "failed"
    assert "reflection was unavailable" in only.status_reason
    # the diagnosis missed; so did the run's consultation of memory at intake, and the plan
    # ran as written; the outcome still went to the learner, whose memory part waits there
    assert only.provenance.reflection_misses == 1
    assert result.reflection.misses == 2
    (outcome,) = harness.learner.outcomes.values()
    assert outcome.memory is not None and outcome.memory.status == "failed"
    assert outcome.memory_queue == req.queues.reflection
    assert any("memory was not consulted" in w for w in result.reflection.warnings)
    assert harness.sandbox.ran == ["a"]
    misses = sorted((e.node_id, e.agent_name) for e in harness.sink.events.values()
                    if e.status == "missed")
    assert misses == [("a", "reflector"), ("run", "memory")]


async def broken_verifier(req: VerifyEvidenceInput) -> Verification:
    raise ApplicationError("the evidence store is unreachable", type="Broken", non_retryable=True)


async def broken_report(req: WriteReportInput) -> ReportPaths:
    raise ApplicationError("disk full", type="ReportUnwritable", non_retryable=True)


async def test_a_failing_evidence_check_ends_the_task_not_the_workflow(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"verify_evidence": broken_verifier})
    result = await harness.run([task("a"), task("b", deps=["a"])])
    first, second = result.tasks
    assert first.status == "failed"
    assert "the evidence could not be checked: Broken: the evidence store is unreachable" in \
        first.status_reason
    assert second.status == "blocked"


async def test_a_report_that_cannot_be_written_still_returns_the_results(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"write_report": broken_report})
    result = await harness.run([task("a")])
    assert result.status == "completed" and result.report is None
    failures = [e for e in harness.sink.events.values() if e.status == "report_failed"]
    assert len(failures) == 1 and "disk full" in failures[0].outputs["reason"]


async def unreachable_learner(req: HandOffInput) -> HandOffAnswer:
    raise ApplicationError("the server is unreachable", type="Unreachable", non_retryable=True)


async def test_a_learner_that_cannot_be_reached_is_a_recorded_miss_not_a_failure(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"hand_off_outcome": unreachable_learner})
    result = await harness.run([task("a"), task("b", deps=["a"])])
    assert [t.status for t in result.tasks] == ["completed", "completed"]
    for t in result.tasks:
        assert t.skill_report is not None and not t.skill_report.reported
        assert "the learner did not take the outcome" in t.skill_report.miss
        assert "the server is unreachable" in t.skill_report.miss
    missed = [e for e in harness.sink.events.values()
              if e.agent_name == "learner" and e.status == "missed"]
    assert sorted(e.node_id for e in missed) == ["a", "b"]


async def refusing_store(req: RecordEventsInput) -> int:
    raise ApplicationError("value out of range", type="EventRejected", non_retryable=True)


async def test_events_the_store_refuses_do_not_stop_the_run(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"record_events": refusing_store})
    result = await harness.run([task("a")])
    assert result.status == "completed"


SCORE_CHECK = [{"metric": "score", "op": ">=", "value": 0.8}]


async def test_a_retry_whose_estimate_got_worse_beyond_its_interval_is_rolled_back(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="oom_above:32", batch_size=64, oom_score=0.9,
                                     score=0.7, ci=0.02, checks=SCORE_CHECK)])
    only = result.tasks[0]
    assert only.status == "failed_retry"
    assert only.status_reason == (
        "the retry regressed metric 'score' held before the retry (0.9 [0.88, 0.92] 95 %) and "
        "now fails score >= 0.8 (0.7 [0.68, 0.72] 95 %); its patch was rolled back")
    assert only.provenance.patches[-1].outcome.startswith("rolled_back: metric 'score'")


async def test_a_retry_whose_estimate_moved_within_the_intervals_is_kept(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await harness.run([task("a", behave="oom_above:32", batch_size=64, oom_score=0.81,
                                     score=0.79, ci=0.05, checks=SCORE_CHECK)])
    only = result.tasks[0]
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 32]
    assert "regressed" not in only.status_reason
    assert only.provenance.patches[-1].outcome == "applied"
