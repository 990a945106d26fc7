"""The hypothesis judge: the question, the gold and the answer in; three facets and reasons out."""

from __future__ import annotations

from activities.agents.roles import Agents
from tests.activities.agents.test_agents import prompt_of
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.judging import JudgeRequest


async def test_the_judge_scores_context_variables_and_relationship(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"context": 1, "variables": 0.5, "relationship": 1,
                         "reasons": "Age is missing from the answer."}))
    got = await agents.judge_hypothesis(JudgeRequest(
        run_id="", question="How does income relate to age?",
        gold="Income rises with age.", answer="Income rises."))
    assert fake.requests[0].body["tools"][0]["name"] == "JudgeOutput"
    assert "## Gold hypothesis\n\nIncome rises with age." in prompt_of(fake)
    assert "## Answer to judge\n\nIncome rises." in prompt_of(fake)
    assert (got.judgement.score, got.judgement.matches) == (0.5, True)
    assert got.spend.role == "hypothesis_judge"
