"""What the debuggers' steps tell the roles after them: the fix's reviewers, the second stage."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.agents.test_agent_flow import ON, fixes, harness_for
from tests.workflows.agents_fakes import FakeAgents
from tests.workflows.harness import task

FAILING = "# behave: crash\nprint(0)\n"


def answers() -> FakeAgents:
    """Three distinct fixes that run; the diagnostic script says what it will tell."""
    scripted = fixes("# behave: ok\n# score: 0.5\nprint(1)\n",
                     "# behave: ok\n# score: 0.8\nprint(2)\n",
                     "# behave: ok\n# score: 0.7\nprint(3)\n")
    scripted["diagnostic_first"] = scripted["diagnostic_first"].model_copy(
        update={"diagnosis": "which columns the table has"})
    return FakeAgents(fixes=scripted)


async def test_model_reviewers_of_a_fix_are_told_its_debugger_and_the_failure(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = answers()
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code=FAILING, behave="")], **ON)
    assert result.tasks[0].status == "completed", result.tasks[0].status_reason
    seen = agents.requests["review_job_model"]
    first, of_fixes = seen[:3], seen[3:]
    assert all(r.fix is None for r in first)
    assert len(of_fixes) == 9 and all(r.fix is not None for r in of_fixes)
    notes = {(r.reviewer, tuple(r.fix.strategies)): r.fix for r in of_fixes if r.fix}
    assert len(notes) == 9
    direct = notes[("infrastructure", ("direct",))]
    assert direct.diagnosis == "direct fix"
    assert direct.failure.outcome == "nonzero_exit" and direct.failure.reason == "exit code 1"
    # each fix's reviewers review that fix's code
    for r in of_fixes:
        assert r.fix is not None
        marker = {"direct": "print(1)", "introspect": "print(2)",
                  "diagnostic": "print(3)"}[r.fix.strategies[0]]
        assert marker in (r.review.job.source or "")


async def test_the_diagnostic_debugger_s_second_stage_sees_the_script_it_wrote(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = answers()
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    await harness.run([task("a", code=FAILING, behave="")], **ON)
    stages = [r for r in agents.requests["debug_job"] if r.strategy == "diagnostic"]
    assert len(stages) == 2
    first, second = stages
    assert first.diagnostic_script is None and first.diagnostic_purpose == ""
    script = agents.fixes["diagnostic_first"].diagnostic_job
    assert script is not None and script.source
    assert second.diagnostic_script == script.source
    assert second.diagnostic_purpose == "which columns the table has"
    assert "column 'x' missing" in (second.diagnostic_output or "")
