"""The review panel: three reviewers, the agents pool's two asked in one dispatch."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.harness import Harness, task
from tests.workflows.task.test_verify_with_job import _dispatches


async def test_the_panel_is_two_dispatches_and_three_verdicts(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    report = await harness.run([task("ok"), task("bad", code="import os\nos.system('ls')\n")])
    assert harness.result is not None
    for result in report.tasks:
        dispatches = await _dispatches(time_env, harness.result.run_id, result.task_id)
        reviews = [d for d in dispatches if d.startswith("review_")]
        assert sorted(reviews) == ["review_infrastructure", "review_ops_quality_safety"]
        assert [v.reviewer for v in result.verdicts] == ["ops", "quality_safety",
                                                         "infrastructure"]
    ok, bad = report.tasks
    assert ok.status == "completed"
    assert bad.status == "rejected" and harness.sandbox.ran == ["ok"]
    assert [v.verdict for v in bad.verdicts][1] == "REJECT"
    reviewed = [e.agent_name for e in harness.sink.events.values()
                if e.event_type == "agent_call" and e.node_id == "ok" and e.agent_name != "learner"]
    assert reviewed == ["ops", "quality_safety", "infrastructure"]  # one event per reviewer
