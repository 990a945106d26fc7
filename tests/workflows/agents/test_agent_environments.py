"""Jobs in a provisioned environment: the debuggers see it and work in it; a run naming one
gives it to every job that names none, and the coder sees its packages."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.environments import REFUSAL, SCIENCE, FakeEnvironments
from tests.histories.capture.goalenv import run_goal_environment
from tests.workflows.agents_fakes import FakeAgents, job, probe_environment, spend
from tests.workflows.harness import Harness, task
from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome
from workflows.contracts.roles import DebugAnswer


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
    result = await harness.run([failing], agents={"enabled": True}, tiering="full")

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


async def test_a_goal_runs_jobs_in_the_runs_environment_and_shows_the_coder_its_packages(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    run = await run_goal_environment(time_env, tmp_path)
    assert run.result.status == "completed", run.result.status_reason
    assert [t.status for t in run.result.tasks] == ["completed", "completed"]
    # every job the coder wrote named no environment, and ran in science after preparing it
    assert run.environments.ran_in == {"load": SCIENCE.label(), "fit": SCIENCE.label(),
                                       "fit.diagnose": SCIENCE.label()}
    asked = {(a.environment, tuple(a.requirements)) for a in run.environments.asked}
    assert asked == {("science", ())}
    coder_saw = run.agents.requests["write_job"]
    assert coder_saw and all(r.environment is not None for r in coder_saw)
    assert {r.environment.environment for r in coder_saw if r.environment} == {
        SCIENCE.label()}
    assert coder_saw[0].environment is not None
    assert coder_saw[0].environment.packages == {"numpy": "2.4.6", "pandas": "3.1.1",
                                                 "scipy": "1.17.1"}
    introspect = next(r for r in run.agents.requests["debug_job"]
                      if r.strategy == "introspect")  # the debugger shown the interpreter
    assert introspect.environment is not None
    assert introspect.environment.environment == SCIENCE.label()


async def test_a_goal_without_an_environment_runs_in_the_worker_interpreter_as_before(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    run = await run_goal_environment(time_env, tmp_path, environment=None)
    assert run.result.status == "completed", run.result.status_reason
    assert run.environments.asked == []
    assert set(run.environments.ran_in.values()) == {"base"}
    assert all(r.environment is None for r in run.agents.requests["write_job"])


async def test_the_runs_environment_fills_in_only_jobs_that_name_none(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    fake = FakeEnvironments(harness)
    harness.overrides.update({"prepare_environment": fake.prepare, "execute_job": fake.execute})
    own = task("own")
    own["job"]["environment"] = "nope"
    report = await harness.run([task("plain"), own], environment="science")
    by_id = {t.task_id: t for t in report.tasks}
    assert by_id["plain"].status == "completed", by_id["plain"].status_reason
    assert fake.ran_in == {"plain": SCIENCE.label()}
    assert by_id["own"].status == "failed" and REFUSAL in by_id["own"].status_reason
    assert [a.environment for a in fake.asked].count("nope") == 1


async def test_model_reviewers_are_shown_the_packages_of_the_environment_the_job_runs_in(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    run = await run_goal_environment(time_env, tmp_path)
    assert run.result.status == "completed", run.result.status_reason
    reviews = run.agents.requests["review_job_model"]
    coder_saw = run.agents.requests["write_job"][0].environment
    assert coder_saw is not None
    assert any(r.fix is None for r in reviews) and any(r.fix is not None for r in reviews)
    for r in reviews:  # first jobs and fixes alike: what the coder was shown
        assert r.environment is not None, (r.task_id, r.reviewer)
        assert r.environment.environment == SCIENCE.label()
        assert r.environment.packages == coder_saw.packages


async def test_without_known_packages_a_first_job_s_reviewers_are_shown_none(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    run = await run_goal_environment(time_env, tmp_path, environment=None)
    reviews = run.agents.requests["review_job_model"]
    assert all(r.environment is None for r in reviews if r.fix is None)
    # a fix's reviewers see the interpreter the failed job ran in, as its debugger did
    introspect = next(r for r in run.agents.requests["debug_job"]
                      if r.strategy == "introspect")
    assert introspect.environment is not None
    fixes = [r for r in reviews if r.fix is not None]
    assert fixes and all(r.environment == introspect.environment for r in fixes)
