"""Guideline skills through the workflows: offered at intake, given to the roles, counted.

Fake activities on the time-skipping server: the library's match offers a guideline for a
jobless task (ids and scores, never text), the coder is asked with it and says it went into
its prompt; the task's provenance, the run's report and the outcome the library records all
name it.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.learning.handoff import Learner
from activities.learning.settle import wait_learned
from tests.histories.capture.all import remember_task
from tests.histories.capture.guided import GUIDE, match_skills
from tests.workflows.agents_fakes import FakeAgents, goal_agents, job
from tests.workflows.harness import Harness, task
from workflows.agents.roles import CodeAnswer, CodeRequest, PlanAnswer, PlanRequest
from workflows.catalogue import RECORD_OUTCOMES
from workflows.library.contracts import RecordAnswer, TaskOutcome, library_id
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow


async def test_a_matched_guideline_reaches_the_coder_and_its_use_is_recorded(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = FakeAgents(jobs={"fast": job("ok")})
    recorded: list[TaskOutcome] = []

    async def write_job(req: CodeRequest) -> CodeAnswer:
        answer = await agents.write_job(req)
        return answer.model_copy(update={"guidelines": [g.skill_id for g in req.guidelines]})

    @RECORD_OUTCOMES.defn
    async def record_outcomes(outcomes: list[TaskOutcome]) -> RecordAnswer:
        recorded.extend(outcomes)
        return RecordAnswer(recorded=len(outcomes))

    queue = f"guided-{uuid.uuid4().hex[:8]}"
    harness = Harness(time_env, queue, tmp_path, overrides={
        **agents.overrides(), "write_job": write_job, "match_skills": match_skills,
        "remember_task": remember_task,
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[record_outcomes], workflows=[SkillLibraryWorkflow])
    req = harness.request([task("a", job=False), task("b", deps=["a"])],
                          skills={"enabled": True},
                          agents={"enabled": True, "model_review": False})
    async with harness.worker():
        result = await time_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=queue)
        keys = [f"{req.run_id}/{t.task_id}" for t in result.tasks]
        assert await wait_learned(time_env.client, queue, keys, limit_s=60) == []
        await time_env.client.get_workflow_handle(library_id(queue)).terminate()

    assert result.status == "completed", result.status_reason
    (asked,) = agents.requests["write_job"]
    assert asked.guidelines == [GUIDE]
    report = harness.report_of(result)
    tasks = {t.task_id: t for t in report.tasks}
    assert tasks["a"].provenance.guidelines == [GUIDE.skill_id]
    assert tasks["b"].provenance.guidelines == []  # it had a job: no coder, no guideline
    assert report.skills.guidelines == {"a": [GUIDE]}
    assert report.skills.guided == {"a": [GUIDE.skill_id]}
    (outcome,) = recorded  # the task with a job used no skill of any form: not recorded
    assert (outcome.task_id, outcome.guidelines, outcome.status) == (
        "a", [GUIDE.skill_id], "completed")


async def test_the_planners_guideline_is_recorded_and_counted_for_the_tasks_it_planned(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = goal_agents()
    recorded: list[TaskOutcome] = []

    async def plan_goal(req: PlanRequest) -> PlanAnswer:
        answer = await agents.plan_goal(req)
        return answer.model_copy(update={"guidelines": [g.skill_id for g in req.guidelines]})

    @RECORD_OUTCOMES.defn
    async def record_outcomes(outcomes: list[TaskOutcome]) -> RecordAnswer:
        recorded.extend(outcomes)
        return RecordAnswer(recorded=len(outcomes))

    queue = f"guided-{uuid.uuid4().hex[:8]}"
    harness = Harness(time_env, queue, tmp_path, overrides={
        **agents.overrides(), "plan_goal": plan_goal, "match_skills": match_skills,
        "remember_task": remember_task,
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[record_outcomes], workflows=[SkillLibraryWorkflow])
    req = harness.goal_request("load and fit", skills={"enabled": True},
                               agents={"enabled": True, "model_review": False})
    async with harness.worker():
        result = await time_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=queue)
        keys = [f"{req.run_id}/{t.task_id}" for t in result.tasks]
        assert await wait_learned(time_env.client, queue, keys, limit_s=60) == []
        await time_env.client.get_workflow_handle(library_id(queue)).terminate()

    assert result.status == "completed", result.status_reason
    (planned,) = agents.requests["plan_goal"]
    assert planned.guidelines == [GUIDE]
    report = harness.report_of(result)
    assert report.skills.guided["planner"] == [GUIDE.skill_id]
    assert {t.task_id: t.provenance.guidelines for t in report.tasks} == {
        "load": [GUIDE.skill_id], "fit": [GUIDE.skill_id]}  # planner and coder: one use each
    assert sorted((o.task_id, tuple(o.guidelines)) for o in recorded) == [
        ("fit", (GUIDE.skill_id,)), ("load", (GUIDE.skill_id,))]
