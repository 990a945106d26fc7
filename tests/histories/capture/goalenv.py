"""Capture the ``goalenv`` histories: a goal run that names its job environment.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.goalenv``
captures this scenario alone (the other saved histories stay as they are). The run's policy
names ``science`` (``assay run GOAL --environment science``):
the planner plans two tasks, the coder is shown science's packages and writes jobs that name
no environment, and each job gets science, is prepared (``prepare_environment``) and runs in
it. The second task's first job crashes; the debuggers, shown science too, fix it.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.histories.capture.environments import FakeEnvironments
from tests.workflows.agents_fakes import FakeAgents, goal_agents, job, probe_environment
from tests.workflows.harness import Harness
from workflows.agents.roles import (
    CodeAnswer,
    CodeRequest,
    DataFile,
)
from workflows.contracts.results import ResearchResult
from workflows.research.workflow import ResearchWorkflow

DATA = [DataFile(name="table.csv", path="/data/table.csv", sha256="a" * 64, size=10,
                 head="x,y\n1,2\n")]


@dataclass
class GoalEnvRun:
    """What the scenario's fakes saw, for the test's assertions."""

    result: ResearchResult
    agents: FakeAgents
    environments: FakeEnvironments


async def run_goal_environment(env: WorkflowEnvironment, root: Path, *,
                               environment: str | None = "science") -> GoalEnvRun:
    """The goalenv scenario (see the module's docstring); ``environment`` is the run's."""
    agents = goal_agents(load_inputs=["table.csv"])
    coder = agents.write_job

    async def write_job(req: CodeRequest) -> CodeAnswer:  # fit's first job crashes
        answer = await coder(req)
        crash = req.task_id == "fit" and not any(
            r.task_id == "fit" for r in agents.requests["write_job"][:-1])
        return answer.model_copy(update={"job": job("crash")}) if crash else answer

    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={**agents.overrides(), "write_job": write_job},
                      extra=[probe_environment])
    fake = FakeEnvironments(harness)
    harness.overrides.update({"prepare_environment": fake.prepare,
                              "execute_job": fake.execute})
    policy: dict[str, object] = {"agents": {"enabled": True}}
    if environment is not None:
        policy["environment"] = environment
    req = harness.goal_request("does y grow with x?", DATA, **policy)
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=harness.queue)
    return GoalEnvRun(result, agents, fake)


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        run = await run_goal_environment(env, root)
        await save(env, "goalenv", run.result)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
