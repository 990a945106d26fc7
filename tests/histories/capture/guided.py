"""Capture the ``guided`` histories: guideline skills offered to a coder, their use counted.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.guided``
captures this scenario alone. A plan with one jobless task and the skills on: the library's match
offers a guideline skill for it (ids and scores only), the coder's answer says the guideline
went into its prompt, the task's outcome carries it and the library records it with
``record_outcomes`` although no job skill was used.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.learning.handoff import Learner
from activities.learning.settle import wait_learned
from tests.histories.capture import alone
from tests.workflows.agents_fakes import FakeAgents, job
from tests.workflows.harness import Harness, task
from workflows.agents.roles import CodeAnswer, CodeRequest
from workflows.contracts.results import ResearchResult
from workflows.library.contracts import GuidelineRef, MatchAnswer, MatchInput, library_id
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow

GUIDE = GuidelineRef(skill_id="seeded-permutations@v1", name="seeded-permutations", score=0.71)


async def match_skills(req: MatchInput) -> MatchAnswer:
    """A library with one guideline skill for a goal and every jobless task, no job skill."""
    goal = {"goal": [GUIDE]} if req.goal else {}
    return MatchAnswer(guidelines=goal | {t.task_id: [GUIDE] for t in req.tasks
                                          if not t.has_job},
                       reasons={t.task_id: "no retrieved skill has a job template"
                                for t in req.tasks if not t.has_job})


async def run_guided(env: WorkflowEnvironment, root: Path) -> tuple[ResearchResult, str]:
    """The run and the id of the library that counted the guideline's use."""
    from tests.histories.capture.all import record_outcomes, remember_task

    agents = FakeAgents(jobs={"fast": job("ok")})

    async def write_job(req: CodeRequest) -> CodeAnswer:
        answer = await agents.write_job(req)
        return answer.model_copy(update={"guidelines": [g.skill_id for g in req.guidelines]})

    queue = f"capture-{uuid.uuid4().hex[:8]}"
    harness = Harness(env, queue, root, overrides={
        **agents.overrides(), "write_job": write_job, "match_skills": match_skills,
        "remember_task": remember_task,
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[record_outcomes], workflows=[SkillLibraryWorkflow])
    req = harness.request([task("a", job=False)], skills={"enabled": True},
                          agents={"enabled": True, "model_review": False})
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=queue)
        keys = [f"{req.run_id}/{t.task_id}" for t in result.tasks]
        assert await wait_learned(env.client, queue, keys) == []
        await env.client.get_workflow_handle(library_id(queue)).terminate()
    assert result.status == "completed", result.status_reason
    return result, library_id(queue)


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        result, library = await run_guided(env, root)
        await save(env, "guided", result)
        await save_one(env, "guided.library", library)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
