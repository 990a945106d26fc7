"""Prompts say what they cut, as the model gets them: the output processor's metrics, the
planner's memory notes, a study's task metrics; and the coder names an environment it is
shown, with the packages it has and their versions, in fast and deep mode."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from activities.agents.roles import Agents
from activities.agents.studies import study_section
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import (
    JOB_ANSWER,
    KEY,
    MODEL,
    code_request,
    data_file,
    plan_request,
    prompt_of,
    summary_request,
)
from tests.activities.agents.test_agents_failures import repair_text
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import decision, plan, report, result
from workflows.contracts.execution import CheckResult
from workflows.contracts.plan import Check
from workflows.contracts.roles import DATA_HEAD_CHARS, EnvironmentFacts
from workflows.contracts.study import StudyContext
from workflows.research.context import task_digest
from workflows.study.carry import summarize

SCIENCE = EnvironmentFacts(python="3.12.4", environment="science@abcdef123456",
                           packages={"numpy": "2.1.0", "pandas": "2.2.3",
                                     "matplotlib": "3.9.2", "scikit-learn": "1.5.2"})
METRICS = {f"m{i:02d}": i / 100 for i in range(24)}


@pytest.fixture
async def agents(fake: FakeAnthropic) -> AsyncIterator[Agents]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield Agents(gateway, environments=["science", "gpu"])
    await gateway.aclose()


async def test_the_output_processor_keeps_the_checked_metrics_and_says_what_it_cut(
        fake: FakeAnthropic, agents: Agents) -> None:
    checks = [CheckResult(check=Check(metric=m, op=">", value=0), passed=True, actual=0.2)
              for m in ("m22", "m23")]
    task = result("fit", metrics=METRICS, checks=checks)
    fake.script(ToolUse({"answer": "Yes."}))
    await agents.summarize_run(summary_request(tasks=[task_digest(task, tail=100)]))
    text = prompt_of(fake)
    assert '"m22": 0.22' in text and '"m23": 0.23' in text and '"m21"' not in text
    assert "- … 4 more metrics not shown: m18, m19, m20, m21" in text


async def test_the_planner_is_told_how_many_memory_notes_were_left_out(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"context": "c", "tasks": [{
        "task_id": "t", "priority": "HIGH", "action": "a", "acceptance_criteria": ["x"],
        "inputs": ["iris.csv"]}]}))
    await agents.plan_goal(plan_request(memory=[f"note {i}" for i in range(25)]))
    text = prompt_of(fake)
    assert "- note 19" in text and "note 20" not in text
    assert "- … 5 more memory notes not shown" in text


def test_a_study_keeps_its_tested_metrics_and_says_which_it_left_out() -> None:
    the_plan = plan([decision("fit")])
    cycle = summarize(report([result("fit", metrics=METRICS)], the_plan), 1,
                      wanted=frozenset({"m23"}))
    fit = cycle.tasks[0]
    assert "m23" in fit.metrics and len(fit.metrics) == 8
    assert fit.metrics_omitted.startswith("… 16 more metrics not shown: m07, m08")
    text = study_section(StudyContext(study_id="s", cycle=2, previous=[cycle]))
    assert "m23 = 0.23" in text and "… 16 more metrics not shown: m07" in text


@pytest.mark.parametrize("mode", ["fast", "deep"])
async def test_the_coder_sees_the_environment_s_packages_with_versions(
        fake: FakeAnthropic, agents: Agents, mode: str) -> None:
    fake.script(ToolUse(JOB_ANSWER))
    await agents.write_job(code_request(mode=mode, environment=SCIENCE))
    text = prompt_of(fake)
    assert "The job runs in the environment science@abcdef123456." in text
    assert "matplotlib==3.9.2" in text and "scikit-learn==1.5.2" in text
    assert "may name in `environment`: `gpu`, `science`, or `base`" in text
    schema = fake.requests[0].body["tools"][0]["input_schema"]
    assert "environment" in schema["properties"]


async def test_the_coder_names_an_environment_the_worker_knows(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({**JOB_ANSWER, "environment": "cuda"}),
                ToolUse({**JOB_ANSWER, "environment": "gpu"}))
    answer = await agents.write_job(code_request())
    assert answer.job.environment == "gpu" and answer.spend.repairs == 1
    said = repair_text(fake, 1)
    assert "`environment` names 'cuda', which this machine does not have" in said
    assert "base, gpu, science" in said


async def test_the_planner_sees_a_long_data_files_whole_first_lines_and_how_much_is_not_shown(
        fake: FakeAnthropic, agents: Agents) -> None:
    """The first 2,000 characters of a longer file end inside a row: the prompt keeps the
    whole lines and says how many bytes it left out, so no row reads as one with empty
    fields."""
    rows = "".join(f"{i},{i * 0.25:.4f},{'malignant' if i % 3 else 'benign'}\n"
                   for i in range(400))
    text_of_file = f"id,value,label\n{rows}"
    cut = text_of_file[:DATA_HEAD_CHARS]
    big = data_file().model_copy(update={"name": "big.csv", "size": len(text_of_file),
                                         "head": cut})
    fake.script(ToolUse({"context": "c", "tasks": [{
        "task_id": "t", "priority": "HIGH", "action": "a", "acceptance_criteria": ["x"],
        "inputs": ["big.csv"]}]}))
    await agents.plan_goal(plan_request(data=[big]))
    text = prompt_of(fake)
    whole = cut.rpartition("\n")[0]
    lines = whole.count("\n") + 1
    assert f"```\n{whole}\n```\n[... only the first {lines} lines shown: " \
           f"{len(text_of_file) - len(whole):,} more bytes of the file not shown ...]" in text
    assert cut.rpartition("\n")[2] not in text.split("```")[1]  # the cut-off row is gone
