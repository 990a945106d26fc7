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
    plan_request,
    prompt_of,
    summary_request,
)
from tests.activities.agents.test_agents_failures import repair_text
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import decision, plan, report, result
from workflows.contracts.execution import CheckResult
from workflows.contracts.plan import Check
from workflows.contracts.roles import EnvironmentFacts
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


def test_a_data_preview_shorter_than_its_file_ends_on_a_whole_line_and_says_what_it_left_out(
        ) -> None:
    from activities.agents.prompting import data_text
    from workflows.contracts.goal import DataFile

    rows = "".join(f"{n},{n * n}\n" for n in range(1000))
    text = f"x,y\n{rows}"
    preview = DataFile(name="t.csv", path="/data/t.csv", sha256="0" * 64, size=len(text),
                       head=text[:2000])
    said = data_text([preview])
    shown = said[said.index("```\n") + 4:said.index("\n[first")]
    assert text.startswith(shown + "\n") and shown.endswith(rows.splitlines()[shown.count(
        "\n") - 1])  # whole lines only: the row cut in the middle is dropped
    assert (f"\n[first {shown.count(chr(10)) + 1} lines shown; the other "
            f"{len(text) - len(shown):,} bytes are left out: the data profile describes the "
            "whole file]\n```") in said
    whole = DataFile(name="s.csv", path="/data/s.csv", sha256="0" * 64, size=8, head="x,y\n1,2\n")
    assert data_text([whole]) == "### s.csv (8 bytes)\n\n```\nx,y\n1,2\n```"  # as it was
