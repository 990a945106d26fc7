"""The answer contract: a goal naming a format gets its answer so, checked against its cites."""

from __future__ import annotations

from activities.agents.roles import Agents
from tests.activities.agents.test_agents import prompt_of, summary_request
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.context import TaskDigest
from workflows.contracts.goal import RunAnswer

FORMAT = '@p_value[p], where "p" is a number rounded to three decimal places'
CITE = {"name": "p_value", "task_id": "compare", "metric": "p_value"}


async def test_a_goal_naming_no_format_asks_what_it_always_did(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes."}))
    answer = await agents.summarize_run(summary_request())
    tool = fake.requests[0].body["tools"][0]
    assert tool["name"] == "RunAnswer"
    assert set(tool["input_schema"]["properties"]) == {"answer", "analysis", "caveats"}
    assert "Answer format" not in prompt_of(fake) and answer.answer.formatted is None
    assert "formatted" not in RunAnswer.model_json_schema()["properties"]


async def test_a_format_is_asked_for_and_checked_against_the_metric_it_cites(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes: p = 0.004.", "in_format": "@p_value[0.004]",
                         "cites": [CITE]}))
    answer = await agents.summarize_run(summary_request(answer_format=FORMAT))
    assert fake.requests[0].body["tools"][0]["name"] == "RunAnswerInFormat"
    assert f"## Answer format\n\n{FORMAT}" in prompt_of(fake)
    formatted = answer.answer.formatted
    assert formatted is not None
    assert (formatted.values, formatted.problems) == ({"p_value": "0.004"}, [])
    assert answer.answer.answer == "Yes: p = 0.004."


async def test_a_value_the_cited_metric_does_not_hold_is_a_problem_not_a_crash(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes.", "in_format": "@p_value[0.04]", "cites": [CITE]}))
    formatted = (await agents.summarize_run(summary_request(answer_format=FORMAT))
                 ).answer.formatted
    assert formatted is not None
    assert formatted.problems == ["@p_value: 0.04 differs from compare.p_value = 0.004"]


async def test_a_missing_or_uncited_field_is_named(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes.", "in_format": "p is small", "cites": []}),
                ToolUse({"answer": "Yes.", "in_format": "@p_value[0.004]",
                         "cites": [{**CITE, "metric": "q"}]}))
    first = (await agents.summarize_run(summary_request(answer_format=FORMAT))).answer
    second = (await agents.summarize_run(summary_request(answer_format=FORMAT))).answer
    assert first.formatted is not None and second.formatted is not None
    assert first.formatted.problems == ["@p_value: missing from the formatted answer"]
    assert second.formatted.problems == [
        "@p_value: cites compare.q, which no completed task's verified metrics hold"]


async def test_an_estimate_is_held_by_its_value_and_each_field_by_its_own_rounding(
        fake: FakeAnthropic, agents: Agents) -> None:
    answer_format = ('@trend[trend], @mean[mean], where "trend" is rounded to three decimal '
                     'places and "mean" to one decimal place')
    task = TaskDigest(task_id="fit", action="Fit the trend", status="completed",
                      metrics={"trend": {"value": 1.3482, "ci": [1.30, 1.40]},
                               "mean": 368.2346},
                      checks=[], artifacts=[], stdout_tail="")
    fake.script(ToolUse({"answer": "1.348 ppm a year.", "in_format": "@trend[1.348], @mean[368.2]",
                         "cites": [{"name": "trend", "task_id": "fit", "metric": "trend"},
                                   {"name": "mean", "task_id": "fit", "metric": "mean"}]}))
    formatted = (await agents.summarize_run(summary_request(answer_format=answer_format,
                                                            tasks=[task]))).answer.formatted
    assert formatted is not None and formatted.problems == []
