"""A plan run ends with an answer: the output processor's when a model is configured."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.agents_fakes import FakeAgents, probe_environment
from tests.workflows.harness import Harness, task
from workflows.contracts.plan import Plan
from workflows.research.report import plan_question
from workflows.research.workflow import ResearchWorkflow

HYPOTHESES = [{"id": "H1", "statement": "a larger score fits better",
               "test": {"metric": "score", "op": ">", "threshold": 0.8}}]


async def test_a_plan_run_with_a_model_is_answered_by_the_output_processor(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents()
    harness = Harness(time_env, task_queue, tmp_path, overrides=agents.overrides(),
                      extra=[probe_environment])
    req = harness.request([task("a", score=0.7), task("b", deps=["a"], score=0.9)],
                          agents={"enabled": True})
    async with harness.worker():
        result = await time_env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                        task_queue=task_queue)
    report = harness.report_of(result)
    assert report.status == "completed", report.status_reason
    assert report.answer is not None
    assert report.answer.answer == "tasks ['a', 'b'] answered the goal"
    [asked] = agents.requests["summarize_run"]
    assert asked.goal == "What do the verified results of the plan 'test' show?"
    assert [t.task_id for t in asked.tasks] == ["a", "b"]
    assert report.model.calls_by_role["output_processor"] == 1


def test_the_question_of_a_plan_is_its_context_and_hypotheses() -> None:
    plan = Plan.model_validate({"decisions": [task("a")], "context": "ridge against OLS",
                                "hypotheses": HYPOTHESES})
    assert plan_question("diabetes", plan) == (
        "What do the verified results of the plan 'diabetes' show?\n"
        "Its context: ridge against OLS\nHypothesis H1: a larger score fits better")
