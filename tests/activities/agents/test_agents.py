"""The agent roles driving the real SDK against the fake Messages API server: each role's
answer becomes the workflow's own type, with what it spent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr

from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, usage
from workflows.contracts.context import TaskDigest
from workflows.contracts.execution import Artifact, ExecutionOutcome
from workflows.contracts.plan import Check, JobSpec, Resources
from workflows.contracts.roles import (
    CodeRequest,
    DataFile,
    DebugRequest,
    EnvironmentFacts,
    ModelReviewRequest,
    PlanDraftOutput,
    PlanRequest,
    PlanReviewRequest,
    SummaryRequest,
)
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict

KEY = "sk-ant-test-agents"
MODEL = "claude-opus-5"
LIGHT = "claude-haiku-4-5"
RUN_ID = "assay-run-iris-morphology-1c0e5f0a2b"
TASK_WORKFLOW_ID = f"{RUN_ID}.task-compare"
WORKSPACE = f"/srv/assay/work/{RUN_ID}/compare/attempt-2"
DATA_PATH = "/srv/assay/plans/iris/iris.csv"
CODE = ("import json\nimport pandas as pd\n\nframe = pd.read_csv('iris.csv')\n"
        "json.dump({'p_value': 0.01}, open('metrics.json', 'w'))\n")
FIXED = CODE.replace("pd.read_csv('iris.csv')", "pd.read_csv('iris.csv', sep=',')")
STDERR = (f'Traceback (most recent call last):\n  File "{WORKSPACE}/job.py", line 4, in <module>\n'
          '  File "/srv/venv/lib/python3.11/site-packages/pandas/core/frame.py", line 3, in get\n'
          "KeyError: 'species'\n")

DRAFT: dict[str, Any] = {"context": "Two tasks", "tasks": [
    {"task_id": "profile", "priority": "HIGH", "action": "Profile iris.csv",
     "acceptance_criteria": ["rows counted"], "inputs": ["iris.csv"],
     "checks": [{"metric": "rows", "op": ">=", "value": 100}]},
    {"task_id": "compare", "action": "Welch test of sepal length", "dependencies": ["profile"],
     "acceptance_criteria": ["p_value reported"], "inputs": ["iris.csv"]}]}
JOB_ANSWER: dict[str, Any] = {
    "code": CODE, "args": {"data": "iris.csv", "seed": 1936},
    "expected_artifacts": ["comparison.json"], "expected_metrics": ["p_value"],
    "resources": {"memory_mb": 256, "timeout_s": 300}, "requirements": ["pandas>=2"],
    "reasoning": "reads, tests, writes", "confidence": 0.8}
FIX_ANSWER: dict[str, Any] = {"diagnosis": "the column is named Species", "code": FIXED,
                              "confidence": 0.7}


def data_file() -> DataFile:
    return DataFile(name="iris.csv", path=DATA_PATH, sha256="ab" * 32, size=4550,
                    head="sepal_length,species\n5.1,setosa\n")


def job(**fields: Any) -> JobSpec:
    base: dict[str, Any] = {
        "code": CODE, "source": CODE, "filename": "job.py", "args": {"data": "iris.csv"},
        "expected_artifacts": ["comparison.json"], "expected_metrics": ["p_value"],
        "resources": Resources(memory_mb=256, timeout_s=300), "requirements": ["pandas>=2"]}
    return JobSpec(**{**base, **fields})


def outcome(workspace: str = WORKSPACE, **fields: Any) -> ExecutionOutcome:
    base: dict[str, Any] = {
        "outcome": "nonzero_exit", "exit_code": 1, "duration_s": 12.75, "peak_memory_mb": 88.5,
        "reason": "exited with status 1: KeyError: 'species'",
        "stderr_tail": STDERR.replace(WORKSPACE, workspace),
        "stdout_tail": f"reading {workspace}/iris.csv\n", "workspace": workspace,
        "isolation": "bwrap",
        "artifacts": [Artifact(name="partial.json", size=3, sha256="cd" * 32,
                               path=f"{workspace}/partial.json")]}
    return ExecutionOutcome(**{**base, **fields})


def environment() -> EnvironmentFacts:
    return EnvironmentFacts(python="3.11.7", packages={"numpy": "2.1.0", "pandas": "2.2.3"})


def plan_request(**fields: Any) -> PlanRequest:
    base: dict[str, Any] = {"run_id": RUN_ID, "goal": "Do iris species differ in sepal length?",
                            "data": [data_file()], "memory": ["seed permutation tests"]}
    return PlanRequest(**{**base, **fields})


def code_request(**fields: Any) -> CodeRequest:
    base: dict[str, Any] = {
        "run_id": RUN_ID, "task_id": "compare", "goal": "Do iris species differ?",
        "action": "Welch test of sepal length between setosa and versicolor",
        "acceptance_criteria": ["p_value reported"],
        "checks": [Check(metric="p_value", op="<", value=0.05)], "input_names": ["iris.csv"],
        "data": [data_file()]}
    return CodeRequest(**{**base, **fields})


def review_request(reviewer: Any = "ops", **fields: Any) -> ModelReviewRequest:
    deterministic = ReviewVerdict(
        reviewer=reviewer, verdict="APPROVE", confidence=0.9, checks={"spec_complete": True},
        warnings=[Finding(code="ops.memory", message="256 MB is tight", line=4)],
        details={"python": "/srv/venv/bin/python"})
    review = ReviewInput(task_id="compare", action="Welch test",
                         acceptance_criteria=["p_value reported"], job=job(),
                         input_names=["iris.csv"])
    base: dict[str, Any] = {"run_id": RUN_ID, "task_id": "compare", "reviewer": reviewer,
                            "review": review, "deterministic": deterministic}
    return ModelReviewRequest(**{**base, **fields})


def debug_request(strategy: Any = "direct", **fields: Any) -> DebugRequest:
    base: dict[str, Any] = {
        "run_id": RUN_ID, "task_id": "compare", "strategy": strategy,
        "action": "Welch test", "acceptance_criteria": ["p_value reported"],
        "input_names": ["iris.csv"], "job": job(), "outcome": outcome(),
        "environment": environment()}
    return DebugRequest(**{**base, **fields})


def summary_request(**fields: Any) -> SummaryRequest:
    task = TaskDigest(task_id="compare", action="Welch test", status="completed",
                      metrics={"p_value": 0.004}, checks=["p_value < 0.05: pass"],
                      artifacts=["comparison.json"], stdout_tail="done\n")
    base: dict[str, Any] = {"run_id": RUN_ID, "goal": "Do iris species differ?",
                            "tasks": [task]}
    return SummaryRequest(**{**base, **fields})


def prompt_of(fake: FakeAnthropic, n: int = 0) -> str:
    """The user message of the ``n``-th request."""
    content = fake.requests[n].body["messages"][0]["content"]
    assert isinstance(content, str)
    return content


@pytest.fixture
async def gateway(fake: FakeAnthropic) -> AsyncIterator[ModelGateway]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                           light_model=LIGHT)
    yield gateway
    await gateway.aclose()


@pytest.fixture
def agents(gateway: ModelGateway) -> Agents:
    return Agents(gateway)


async def test_the_planner_drafts_a_plan_and_says_what_it_spent(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(DRAFT, usage=usage(1200, 300)))
    answer = await agents.plan_goal(plan_request())
    assert answer.draft == PlanDraftOutput.model_validate(DRAFT)
    spend = answer.spend
    assert (spend.role, spend.model, spend.calls, spend.repairs, spend.replayed) == (
        "planner", MODEL, 1, 0, False)
    assert (spend.usage.input_tokens, spend.usage.output_tokens) == (1200, 300)
    assert len(spend.exchange_ids) == 1 and len(spend.exchange_ids[0]) == 32
    body = fake.requests[0].body
    assert body["tools"][0]["name"] == "PlanDraftOutput"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][0]["text"].startswith("# Role: planner")


async def test_the_planner_revises_a_draft_with_its_feedback(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(DRAFT))
    previous = PlanDraftOutput.model_validate(DRAFT)
    await agents.plan_goal(plan_request(previous=previous, feedback=["merge the two tasks"]))
    text = prompt_of(fake)
    assert "## Your previous draft" in text and "Welch test of sepal length" in text
    assert "- merge the two tasks" in text


async def test_a_plan_review_comes_back_as_is(fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"verdict": "REJECT", "concerns": ["task compare lacks a check"]}))
    req = PlanReviewRequest(run_id=RUN_ID, goal="Do iris species differ?", data=[data_file()],
                            draft=PlanDraftOutput.model_validate(DRAFT))
    answer = await agents.review_plan(req)
    assert (answer.review.verdict, answer.review.concerns) == (
        "REJECT", ["task compare lacks a check"])
    assert answer.spend.role == "plan_reviewer" and answer.spend.model == LIGHT
    assert "Welch test of sepal length" in prompt_of(fake)


async def test_the_coder_answer_becomes_a_job_spec_ready_for_review(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(JOB_ANSWER))
    answer = await agents.write_job(code_request())
    assert answer.job == JobSpec(
        code=CODE, source=CODE, filename="job.py", args={"data": "iris.csv", "seed": 1936},
        expected_artifacts=["comparison.json"], expected_metrics=["p_value"],
        resources=Resources(memory_mb=256, timeout_s=300), requirements=["pandas>=2"])
    assert (answer.reasoning, answer.confidence) == ("reads, tests, writes", 0.8)
    assert answer.spend.role == "coder" and answer.spend.model == MODEL
    system = fake.requests[0].body["system"][0]["text"]
    assert "# Role: coder" in system and "## How a job runs" in system


async def test_the_model_reviewer_answer_becomes_a_review_verdict(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"verdict": "REJECT", "confidence": 0.7,
                         "critical": ["p_value is never computed"],
                         "warnings": ["no seed"], "reasoning": "the test is missing"}))
    answer = await agents.review_job_model(review_request("quality_safety"))
    assert answer.verdict == ReviewVerdict(
        reviewer="quality_safety", verdict="REJECT", confidence=0.7,
        critical=[Finding(code="model.critical", message="p_value is never computed",
                          severity="critical")],
        warnings=[Finding(code="model.warning", message="no seed", severity="warning")],
        reasoning="the test is missing", details={"source": "model", "model": LIGHT})
    assert answer.spend.role == "reviewer_quality_safety"
    text = prompt_of(fake)
    assert "[ops.memory] (line 4) 256 MB is tight" in text and CODE.splitlines()[1] in text
    assert "/srv/venv/bin/python" not in text


async def test_a_direct_fix_patches_the_job_and_keeps_its_promises(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(FIX_ANSWER))
    answer = await agents.debug_job(debug_request())
    assert answer.job == job(code=FIXED, source=FIXED)
    assert answer.diagnostic_job is None
    assert (answer.strategy, answer.diagnosis, answer.confidence) == (
        "direct", "the column is named Species", 0.7)
    assert answer.spend.role == "debugger_direct" and answer.spend.model == MODEL
    assert "## Sandbox environment" not in prompt_of(fake)


async def test_a_fix_of_a_plan_file_job_replaces_its_entry_with_code(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({**FIX_ANSWER, "requirements": ["pandas>=2.2"]}))
    planned = job(code=None, entry="jobs/compare.py", filename="compare.py")
    answer = await agents.debug_job(debug_request("introspect", job=planned))
    assert answer.job is not None
    assert (answer.job.entry, answer.job.code, answer.job.source, answer.job.filename) == (
        None, FIXED, FIXED, "compare.py")
    assert answer.job.requirements == ["pandas>=2.2"]
    assert (answer.job.args, answer.job.resources) == (planned.args, planned.resources)
    JobSpec.model_validate(answer.job.model_dump())
    assert "pandas==2.2.3" in prompt_of(fake) and "Python 3.11.7" in prompt_of(fake)


async def test_the_diagnostic_debugger_first_asks_for_a_diagnostic_job(
        fake: FakeAnthropic, agents: Agents) -> None:
    script = "import pandas as pd\nprint(pd.read_csv('iris.csv').columns)\n"
    fake.script(ToolUse({"code": script, "purpose": "see the columns"}))
    answer = await agents.debug_job(debug_request("diagnostic"))
    assert answer.job is None and answer.diagnosis == "see the columns"
    assert answer.diagnostic_job == JobSpec(
        code=script, source=script, filename="diagnose.py",
        resources=Resources(memory_mb=256, timeout_s=120))
    assert fake.requests[0].body["tools"][0]["name"] == "DiagnosticOutput"


async def test_the_diagnostic_debugger_is_not_shown_an_empty_environment(
        fake: FakeAnthropic, agents: Agents) -> None:
    """Its packages are the introspect debugger's part: its prompt says its script prints
    them, rather than showing a "Sandbox environment" of "(none)"."""
    fake.script(ToolUse({"code": "print(1)\n", "purpose": "versions"}))
    await agents.debug_job(debug_request("diagnostic", environment=None))
    assert "## Sandbox environment" not in prompt_of(fake)
    system = fake.requests[0].body["system"][0]["text"]
    assert "the environment's packages are\nnot listed, so have your script print" in system


async def test_the_diagnostic_debugger_then_fixes_from_the_diagnostic_output(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(FIX_ANSWER))
    printed = f"Index(['Species'], dtype='object') read from {WORKSPACE}/iris.csv"
    answer = await agents.debug_job(debug_request("diagnostic", diagnostic_output=printed))
    assert answer.job == job(code=FIXED, source=FIXED) and answer.diagnostic_job is None
    text = prompt_of(fake)
    assert "Index(['Species'], dtype='object') read from ./iris.csv" in text
    assert fake.requests[0].body["tools"][0]["name"] == "DebugOutput"


async def test_the_output_processor_writes_on_the_writing_tier_unless_models_says(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes.", "caveats": []}), ToolUse({"answer": "Yes.",
                                                                    "caveats": []}))
    written = await agents.summarize_run(summary_request())
    assert (written.spend.model, written.spend.model != LIGHT) == (MODEL, True)
    chosen = ModelGateway(SecretStr(KEY), fake.base_url,
                          {"default": MODEL, "output_processor": "claude-opus-5"},
                          light_model=LIGHT)
    try:
        overridden = await Agents(chosen).summarize_run(summary_request())
    finally:
        await chosen.aclose()
    assert overridden.spend.model == "claude-opus-5"
    assert fake.requests[1].body["model"] == "claude-opus-5"


async def test_the_output_processor_answers_the_goal(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Yes: p = 0.004.", "caveats": ["one comparison"]}))
    answer = await agents.summarize_run(summary_request())
    assert (answer.answer.answer, answer.answer.caveats) == ("Yes: p = 0.004.",
                                                             ["one comparison"])
    assert answer.spend.role == "output_processor" and answer.spend.model == MODEL
    assert '"p_value": 0.004' in prompt_of(fake) and "p_value < 0.05: pass" in prompt_of(fake)
