"""An ended study asks the study synthesizer for its answer; without one the report says why."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.agents_fakes import FakeAgents, probe_environment
from tests.workflows.study.test_study_workflow import ACCEPT, H1, Study, cycle_plan
from workflows.contracts.cycles import StudyInput, SynthesisRequest
from workflows.contracts.synthesis import StudySynthesis

ANSWER = StudySynthesis.model_validate({
    "conclusion": "A small step fits: score 0.95.",
    "statements": [{"kind": "found", "text": "H1 holds.",
                    "cites": [{"cycle": 1, "task_id": "fit1", "metric": "score"}]}]})


def with_model(inp: StudyInput) -> StudyInput:
    agents = inp.policy.agents.model_copy(update={"enabled": True})
    return inp.model_copy(update={"policy": inp.policy.model_copy(update={"agents": agents})})


async def ended(env: WorkflowEnvironment, tmp_path: Path, agents: FakeAgents,
                *, model: bool = True) -> Study:
    study = Study(env, f"synthesis-{tmp_path.name}", tmp_path, agents=agents.overrides(),
                  extra=[probe_environment])
    inp = study.input([cycle_plan(1, 0.95, "H1", H1)], **ACCEPT)
    async with study.harness.worker():
        result = await (await study.start(with_model(inp) if model else inp)).result()
    assert (result.status, result.cycles) == ("completed", 1), result.reason
    return study


async def test_an_ended_study_asks_the_synthesizer_and_its_answer_reaches_the_report(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = FakeAgents(synthesis=ANSWER)
    study = await ended(own_time_env, tmp_path, agents)
    [asked] = agents.requests["synthesize_study"]
    assert isinstance(asked, SynthesisRequest)
    assert (asked.status, asked.reason) == ("completed", "acceptance criteria met: score = "
                                                         "0.95 (task fit1) >= 0.9")
    assert [(h.id, h.status) for h in asked.state.tree.hypotheses] == [("H1", "supported")]
    assert asked.state.summaries[0].tasks[0].metrics == {"score": 0.95}
    assert asked.state.policy.acceptance[0].describe() == "score >= 0.9"
    final = study.reports.written[-1]
    assert final.synthesis == ANSWER and final.synthesis_note == ""
    assert final.state.spent_usd >= 0.01  # the synthesizer's call is counted


async def test_a_failed_synthesizer_leaves_the_deterministic_synthesis_saying_why(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = FakeAgents(synthesis=None)
    study = await ended(own_time_env, tmp_path, agents)
    final = study.reports.written[-1]
    assert final.synthesis is None
    assert final.synthesis_note.startswith("the study_synthesizer gave no answer: ")
    assert "unusable answer" in final.synthesis_note


async def test_without_a_model_the_synthesizer_is_not_asked_and_the_report_says_so(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = FakeAgents(synthesis=ANSWER)
    study = await ended(own_time_env, tmp_path, agents, model=False)
    assert "synthesize_study" not in agents.requests
    final = study.reports.written[-1]
    assert final.synthesis is None and final.synthesis_note.startswith("no model is configured")


async def test_a_cancelled_study_is_synthesized_too(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    from tests.histories.capture.synthesis import run_synthesis_cancelled

    await run_synthesis_cancelled(own_time_env, tmp_path)


async def test_a_spent_study_budget_refuses_the_synthesizer_and_the_report_says_so(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    agents = FakeAgents(synthesis=ANSWER)
    study = Study(own_time_env, f"synthesis-{tmp_path.name}", tmp_path,
                  agents=agents.overrides(), extra=[probe_environment])
    inp = with_model(study.input([cycle_plan(1, 0.5, "H1", H1)], budget_usd=0.001, **ACCEPT))
    async with study.harness.worker():
        result = await (await study.start(inp)).result()
    assert result.reason.startswith("budget spent"), result.reason
    assert "synthesize_study" not in agents.requests
    final = study.reports.written[-1]
    assert final.synthesis is None
    assert final.synthesis_note.startswith("model budget exhausted: cost budget of $0.0000")
