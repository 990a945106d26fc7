"""Planning a study's cycle (time-skipping): the planner is told the study and what memory
recalls, its hypotheses become the plan's, a bad link goes back as feedback, and memory that
fails or is not to be asked never holds planning up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.study_cycle import RULE, FakeRecall, cycle_agents, draft, study
from tests.histories.capture.study_cycle import run as run_cycle
from tests.workflows.agents_fakes import FakeAgents, job
from workflows.contracts.results import RunReport
from workflows.contracts.study import StudyContext


async def run(env: WorkflowEnvironment, queue: str, root: Path, fakes: FakeAgents,
              recall: FakeRecall, study_: StudyContext | None = None,
              **policy: Any) -> RunReport:
    harness, result = await run_cycle(env, queue, root, fakes, recall, study_, **policy)
    return harness.report_of(result)


async def test_a_cycle_is_planned_from_the_study_and_memory_with_hypotheses(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = cycle_agents()
    recall = FakeRecall()
    result = await run(time_env, task_queue, tmp_path, agents, recall, study())
    assert result.status == "completed", result.status_reason
    first, second = agents.requests["plan_goal"]
    assert first.study == study() and second.study == study()
    assert first.memory == [RULE] and second.memory == [RULE]  # asked once, given each time
    assert len(recall.requests) == 1
    assert recall.requests[0].goal == "Does boosting beat the baseline?"
    assert recall.requests[0].topics == ["claim H1"]  # the open hypotheses
    assert any("task boost: unknown hypothesis 'H9'" in f for f in second.feedback)
    assert result.plan is not None
    assert {d.task_id: d.hypothesis for d in result.plan.decisions} == {"boost": "H3",
                                                                       "refit": "H2"}
    assert [(h.id, h.parent, h.status) for h in result.plan.hypotheses] == [
        ("H3", "H1", "open"), ("H2", "H1", "open")]
    [answered] = agents.requests["summarize_run"]  # told the study, the cycle's tests
    assert answered.study is not None and answered.study.cycle == 2
    assert answered.study.previous == [] and answered.testing == ["H2", "H3"]


async def test_memory_that_fails_leaves_the_planner_without_notes(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft({"a": None})], jobs={"fast": job("ok")})
    recall = FakeRecall(fail=True)
    result = await run(time_env, task_queue, tmp_path, agents, recall)
    assert result.status == "completed", result.status_reason
    assert recall.requests and agents.requests["plan_goal"][0].memory == []
    assert agents.requests["plan_goal"][0].study is None
    [answered] = agents.requests["summarize_run"]  # a run of its own: as it always was
    assert answered.study is None and answered.testing == []
    assert {"study", "testing"}.isdisjoint(answered.model_dump())


async def test_memory_is_not_asked_when_off_or_when_the_models_are_recorded(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    policies: list[dict[str, Any]] = [
        {"memory": {"enabled": False}},
        {"agents": {"enabled": True, "plan_review_rounds": 1,
                    "recording": {"mode": "replay", "path": str(tmp_path / "r.jsonl")}}}]
    for n, policy in enumerate(policies):
        agents = FakeAgents(drafts=[draft({"a": None})], jobs={"fast": job("ok")})
        recall = FakeRecall()
        result = await run(time_env, f"{task_queue}-{n}", tmp_path / str(n), agents, recall,
                           None, **policy)
        assert result.status == "completed", result.status_reason
        assert recall.requests == [] and agents.requests["plan_goal"][0].memory == []
