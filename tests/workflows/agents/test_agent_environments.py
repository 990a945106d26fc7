"""Debuggers of a job in a provisioned environment see that environment and work in it."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.agents_fakes import FakeAgents, job, probe_environment, spend
from tests.workflows.capture_environments import SCIENCE
from tests.workflows.harness import Harness, task
from workflows.agents.roles import DebugAnswer
from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome


async def test_debuggers_see_the_environment_and_their_scripts_and_fixes_run_in_it(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    fixed = "# behave: ok\n# score: 0.8\nprint('fixed')\n"
    agents = FakeAgents(fixes={
        s: DebugAnswer(strategy=s, job=job(code=fixed, args={"behave": ""}), diagnosis="fixed",
                       confidence=0.8, spend=spend("debugger"))
        for s in ("direct", "introspect", "diagnostic")} | {
        "diagnostic_first": DebugAnswer(strategy="diagnostic", spend=spend("debugger"),
                                        diagnostic_job=job("diagnose", filename="diag.py"))})
    harness = Harness(time_env, task_queue, tmp_path, overrides=agents.overrides(),
                      extra=[probe_environment])
    ran_in: list[tuple[str, str]] = []
    execute = harness.sandbox.execute

    async def prepare(req: PrepareEnvironmentInput) -> PreparedEnvironment:
        return SCIENCE

    async def execute_in(req: ExecuteJobInput) -> ExecutionOutcome:
        ran_in.append((req.task_id, req.environment.label() if req.environment else "base"))
        return await execute(req)

    harness.overrides.update({"prepare_environment": prepare, "execute_job": execute_in})
    failing = task("a", code="# behave: crash\nprint(0)\n", behave="")
    failing["job"]["environment"] = "science"
    result = await harness.run([failing], agents={"enabled": True})

    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert only.provenance.job_author.startswith("debugger:")
    assert {where for _, where in ran_in} == {SCIENCE.label()}, ran_in
    assert sorted(t for t, _ in ran_in) == ["a", "a", "a.diagnose"]  # alike fixes run once
    introspect = next(r for r in agents.requests["debug_job"] if r.strategy == "introspect")
    assert introspect.environment is not None
    assert introspect.environment.environment == SCIENCE.label()
    assert introspect.environment.packages == {"numpy": "2.4.6", "pandas": "3.1.1",
                                               "scipy": "1.17.1"}
