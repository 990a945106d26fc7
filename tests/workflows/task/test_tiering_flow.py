"""Complexity tiers on a real Temporal test server: what a light task and a full one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.workflows.agents_fakes import FakeAgents, job, probe_environment, spend
from tests.workflows.harness import Harness, task
from workflows.contracts.roles import DebugAnswer

ON: dict[str, Any] = {"enabled": True}


def harness_for(env: WorkflowEnvironment, queue: str, root: Path,
                agents: FakeAgents) -> Harness:
    return Harness(env, queue, root, overrides=agents.overrides(), extra=[probe_environment])


def working_fixes() -> dict[str, DebugAnswer]:
    """Debugger answers whose fixes all work."""
    def fix(strategy: Any) -> DebugAnswer:
        return DebugAnswer(strategy=strategy, job=job(code="# behave: ok\nprint(1)\n",
                                                      args={"behave": ""}),
                           diagnosis=f"{strategy} fix", confidence=0.7, spend=spend("debugger"))
    return {"direct": fix("direct"), "introspect": fix("introspect"),
            "diagnostic_first": DebugAnswer(
                strategy="diagnostic", diagnostic_job=job("diagnose", filename="diagnose.py"),
                spend=spend("debugger")),
            "diagnostic": fix("diagnostic")}


def reviewers(agents: FakeAgents) -> list[str]:
    """The model reviewers asked, in the order they were asked."""
    return [r.reviewer for r in agents.requests.get("review_job_model", [])]


async def test_a_light_task_asks_one_model_reviewer(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents()
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a")], agents=ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert reviewers(agents) == ["quality_safety"]
    assert {v.reviewer for v in only.verdicts} == {"ops", "quality_safety", "infrastructure"}


async def test_a_light_tasks_first_failure_runs_it_again_as_full_without_debuggers(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(fixes=working_fixes())
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", behave="crash_once")], agents=ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert harness.sandbox.ran == ["a", "a"]
    assert "debug_job" not in agents.requests
    asked = reviewers(agents)
    assert asked[0] == "quality_safety" and sorted(asked[1:]) == ["infrastructure", "ops"]


async def test_a_light_task_failing_twice_gets_the_debuggers(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(fixes=working_fixes())
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code="# behave: crash\nprint(0)\n", behave="")],
                               agents=ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert only.provenance.job_author.startswith("debugger:")
    assert harness.sandbox.ran[:3] == ["a", "a", "a.diagnose"]


async def test_full_policy_restores_the_whole_panel_and_the_debuggers_at_once(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(fixes=working_fixes())
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    crashing = task("a", code="# behave: crash\nprint(0)\n", behave="")
    result = await harness.run([crashing], agents=ON, tiering="full")
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert sorted(reviewers(agents)[:3]) == ["infrastructure", "ops", "quality_safety"]
    assert harness.sandbox.ran[:2] == ["a", "a.diagnose"]
    assert len(agents.requests["debug_job"]) == 4  # direct, introspect, diagnostic twice


async def test_a_plans_full_label_gives_a_small_task_the_whole_panel(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents()
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    labelled = {**task("a"), "complexity": "full"}
    result = await harness.run([labelled], agents=ON)
    assert result.tasks[0].status == "completed", result.tasks[0].status_reason
    assert sorted(reviewers(agents)) == ["infrastructure", "ops", "quality_safety"]
