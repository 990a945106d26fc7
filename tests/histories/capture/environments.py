"""Capture the ``environments`` histories: jobs that run in a prepared environment, or not.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.environments``
captures this scenario alone. Task ``sci`` names the science environment: the task prepares
it (``prepare_environment``) and runs its job in it; ``plain`` names none and runs as before
(no preparation); ``nope`` names an environment the sandbox does not know and ends with the
refusal's reason before its job runs.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.harness import Harness, task
from workflows.common.errors import ErrorType
from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome
from workflows.contracts.results import ResearchResult, RunReport

SCIENCE = PreparedEnvironment(name="science", digest="ab" * 32, python="3.11.7",
                              pins=["numpy==2.4.6", "pandas==3.1.1", "scipy==1.17.1"],
                              requirements=["numpy", "pandas", "scipy"], install_s=6.3)
REFUSAL = "there is no environment named 'nope'; known: science"


class FakeEnvironments:
    """``prepare_environment`` answering science, refusing ``nope``; records what it was asked
    and which environment each job then ran in."""

    def __init__(self, harness: Harness) -> None:
        self.asked: list[PrepareEnvironmentInput] = []
        self.ran_in: dict[str, str] = {}
        self._execute = harness.sandbox.execute

    async def prepare(self, req: PrepareEnvironmentInput) -> PreparedEnvironment:
        self.asked.append(req)
        if req.environment == "nope":
            raise ApplicationError(REFUSAL, type=ErrorType.ENVIRONMENT_REFUSED,
                                   non_retryable=True)
        return SCIENCE

    async def execute(self, req: ExecuteJobInput) -> ExecutionOutcome:
        self.ran_in[req.task_id] = req.environment.label() if req.environment else "base"
        return await self._execute(req)


def decisions() -> list[dict[str, object]]:
    sci, plain, nope = task("sci"), task("plain"), task("nope")
    sci["job"]["environment"] = "science"
    nope["job"]["environment"] = "nope"
    return [sci, plain, nope]


async def run_environments(env: WorkflowEnvironment, root: Path,
                           ) -> tuple[ResearchResult, RunReport, FakeEnvironments]:
    """The environments scenario (see the module's docstring)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root)
    fake = FakeEnvironments(harness)
    harness.overrides.update({"prepare_environment": fake.prepare,
                              "execute_job": fake.execute})
    report = await harness.run(decisions())
    assert harness.result is not None
    return harness.result, report, fake


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        result, _, _ = await run_environments(env, root)
        await save(env, "environments", result)

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
