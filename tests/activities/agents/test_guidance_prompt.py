"""Guideline skills in the roles' prompts: loaded by id, best score first, within a budget.

The section is built from real patterns (one long enough to need cutting); the roles send it
to the scripted Messages API server, and the test reads it back from the request received.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from pydantic import SecretStr

from activities.agents.guidance import CHARS_PER_TOKEN, guidance_section
from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import (
    FIXED,
    JOB_ANSWER,
    KEY,
    MODEL,
    code_request,
    debug_request,
    plan_request,
    prompt_of,
)
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.patterns import SkillPattern
from workflows.contracts.skills import GuidelineRef

SEED_RULE = "Seed every permutation with 1936 so re-runs agree."
WELCH_RULE = "Prefer Welch's t-test when group variances differ."
LONG_TAIL = "This paragraph is far down the guideline and never fits."


def pattern(name: str, guideline: str) -> SkillPattern:
    return SkillPattern(name=name, description=f"Guidance: {name}", guideline=guideline)


PATTERNS = {
    "seeding@v1": pattern("seeding", f"# Seeding\n\n{SEED_RULE}"),
    "welch@v1": pattern("welch", f"# Welch\n\n{WELCH_RULE}"),
    "huge@v1": pattern("huge", "# Huge\n\n" + "\n\n".join(
        f"Step {n}: check the assumptions of the test once more." for n in range(2000))
        + f"\n\n{LONG_TAIL}"),
}
REFS = [GuidelineRef(skill_id="seeding@v1", name="seeding", score=0.41),
        GuidelineRef(skill_id="welch@v1", name="welch", score=0.83)]


class Library:
    """Guideline patterns by id, as the skill store would give them."""

    def __init__(self, patterns: dict[str, SkillPattern]) -> None:
        self.known = patterns
        self.asked: list[list[str]] = []

    async def patterns(self, skill_ids: Sequence[str]) -> dict[str, SkillPattern]:
        self.asked.append(list(skill_ids))
        return {i: self.known[i] for i in skill_ids if i in self.known}


@pytest.fixture
async def guided(fake: FakeAnthropic) -> AsyncIterator[Agents]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield Agents(gateway, guides=Library(PATTERNS), guideline_tokens=1000)
    await gateway.aclose()


def test_the_section_holds_the_guidelines_best_score_first_within_budget() -> None:
    text, used = guidance_section(REFS, PATTERNS, tokens=1000)
    assert used == ["welch@v1", "seeding@v1"]
    assert text.index(WELCH_RULE) < text.index(SEED_RULE)
    assert "### welch (skill welch@v1, match score 0.83)" in text
    assert len(text) <= 1000 * CHARS_PER_TOKEN


def test_a_guideline_larger_than_the_budget_is_cut_not_refused() -> None:
    refs = [GuidelineRef(skill_id="huge@v1", name="huge", score=0.9), *REFS]
    text, used = guidance_section(refs, PATTERNS, tokens=1000)
    assert used[0] == "huge@v1"
    assert "Step 0: check the assumptions" in text and LONG_TAIL not in text
    assert "more characters of the guideline of skill huge@v1 are kept in the library" in text
    assert len(text) <= 1000 * CHARS_PER_TOKEN
    assert "left out: the prompt's budget for guidelines is spent" in text
    assert used == ["huge@v1"]


def test_an_unknown_guideline_is_left_out_and_none_gives_no_section() -> None:
    gone = [GuidelineRef(skill_id="gone@v1", name="gone", score=0.99)]
    assert guidance_section(gone, PATTERNS) == ("", [])


async def test_the_coder_prompt_carries_the_guidelines_and_the_answer_names_them(
        fake: FakeAnthropic, guided: Agents) -> None:
    fake.script(ToolUse(JOB_ANSWER))
    answer = await guided.write_job(code_request(guidelines=REFS))
    prompt = prompt_of(fake)
    assert "## Guideline skills from the library" in prompt
    assert prompt.index(WELCH_RULE) < prompt.index(SEED_RULE)
    assert prompt.index("Welch test of sepal length") < prompt.index(WELCH_RULE)
    assert answer.guidelines == ["welch@v1", "seeding@v1"]


async def test_the_planner_and_debuggers_get_them_too(fake: FakeAnthropic,
                                                      guided: Agents) -> None:
    fake.script(ToolUse({"diagnosis": "the column is named species_name",
                         "code": FIXED, "confidence": 0.7}))
    answer = await guided.debug_job(debug_request(guidelines=REFS[:1]))
    assert SEED_RULE in prompt_of(fake) and answer.guidelines == ["seeding@v1"]
    fake.script(ToolUse({"context": "one task", "tasks": [{
        "task_id": "compare", "priority": "HIGH", "action": "Welch test",
        "acceptance_criteria": ["p_value reported"], "inputs": ["iris.csv"]}]}))
    plan = await guided.plan_goal(plan_request(guidelines=REFS[1:]))
    assert WELCH_RULE in prompt_of(fake, 1) and plan.guidelines == ["welch@v1"]


async def test_without_guidelines_the_prompt_is_unchanged(fake: FakeAnthropic,
                                                          guided: Agents,
                                                          agents: Agents) -> None:
    fake.script(ToolUse(JOB_ANSWER), ToolUse(JOB_ANSWER))
    plain = await agents.write_job(code_request())
    quiet = await guided.write_job(code_request())
    assert prompt_of(fake, 0) == prompt_of(fake, 1)
    assert plain.guidelines == quiet.guidelines == []
