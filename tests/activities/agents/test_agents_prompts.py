"""What the roles' prompts hold and never hold, that the same request is the same bytes,
and which model each role runs on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from importlib import resources
from typing import Any

import pytest
from pydantic import SecretStr

from activities.agents.prompting import scrub
from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import (
    CODE,
    DATA_PATH,
    DRAFT,
    FIX_ANSWER,
    JOB_ANSWER,
    KEY,
    LIGHT,
    MODEL,
    RUN_ID,
    TASK_WORKFLOW_ID,
    WORKSPACE,
    code_request,
    debug_request,
    environment,
    job,
    outcome,
    plan_request,
    prompt_of,
    review_request,
    summary_request,
)
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.roles import PlanDraftOutput, PlanReviewRequest

REVIEW = {"verdict": "APPROVE", "confidence": 0.8}
OTHER_RUN = "assay-run-iris-morphology-9f8e7d6c5b-r2"
OTHER_WORKSPACE = f"/var/lib/assay/work/{OTHER_RUN}/compare/attempt-1"
ROLE_FILES = ("planner", "plan_reviewer", "coder", "reviewer_ops", "reviewer_quality_safety",
              "reviewer_infrastructure", "debugger_direct", "debugger_introspect",
              "debugger_diagnostic", "output_processor", "job_contract")


def answer_every_role(fake: FakeAnthropic) -> None:
    """Routes answering each role's tool, whatever order the requests arrive in."""
    fake.on_tool("PlanDraftOutput", ToolUse(DRAFT, usage=None))
    fake.on_tool("PlanReviewOutput", ToolUse(REVIEW, usage=None))
    fake.on_tool("JobOutput", ToolUse(JOB_ANSWER, usage=None))
    fake.on_tool("ModelReviewOutput", ToolUse(REVIEW, usage=None))
    fake.on_tool("DebugOutput", ToolUse(FIX_ANSWER, usage=None))
    fake.on_tool("RunAnswer", ToolUse({"answer": "Yes."}, usage=None))


def every_role(agents: Agents, run_id: str = RUN_ID,
               workspace: str = WORKSPACE) -> list[Callable[[], Awaitable[Any]]]:
    """One call of every role, for run ``run_id`` with jobs run in ``workspace``."""
    draft = PlanDraftOutput.model_validate(DRAFT)
    failed = outcome(workspace, duration_s=99.5 if run_id != RUN_ID else 12.75)
    return [
        lambda: agents.plan_goal(plan_request(run_id=run_id)),
        lambda: agents.review_plan(PlanReviewRequest(run_id=run_id, goal="g", draft=draft)),
        lambda: agents.write_job(code_request(run_id=run_id, mode="deep", previous_job=job(),
                                              feedback=[f"KeyError in {workspace}/job.py"],
                                              environment=environment())),
        lambda: agents.review_job_model(review_request("infrastructure", run_id=run_id)),
        lambda: agents.debug_job(debug_request("direct", run_id=run_id, outcome=failed)),
        lambda: agents.debug_job(debug_request("introspect", run_id=run_id, outcome=failed)),
        lambda: agents.summarize_run(summary_request(run_id=run_id)),
    ]


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        answer_every_role(server)
        yield server


@pytest.fixture
async def gateway(fake: FakeAnthropic) -> AsyncIterator[Callable[..., ModelGateway]]:
    """Builds gateways on the fake server (models as given), closing them afterwards."""
    made: list[ModelGateway] = []

    def build(models: dict[str, str] | None = None, light: str | None = None) -> ModelGateway:
        made.append(ModelGateway(SecretStr(KEY), fake.base_url, models or {"default": MODEL},
                                 light_model=light))
        return made[-1]

    yield build
    for each in made:
        await each.aclose()


async def test_prompts_never_hold_ids_times_or_absolute_paths(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    for call in every_role(Agents(gateway())):
        await call()
    for seen in fake.requests:
        raw = seen.raw.decode()
        for forbidden in (RUN_ID, TASK_WORKFLOW_ID, WORKSPACE, DATA_PATH, "/srv/", "12.75",
                          "88.5", "duration", "peak"):
            assert forbidden not in raw, (forbidden, seen.body["tools"][0]["name"])


async def test_a_debugger_sees_the_failure_with_paths_made_relative(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    await Agents(gateway()).debug_job(debug_request("introspect"))
    text = prompt_of(fake)
    assert 'File "./job.py", line 4' in text
    assert "<site-packages>/pandas/core/frame.py" in text
    assert "KeyError: 'species'" in text and "reading ./iris.csv" in text
    assert "outcome: nonzero_exit" in text and "exit code: 1" in text
    assert 'artifacts left: ["partial.json"]' in text
    assert CODE.splitlines()[3] in text


async def test_the_same_request_in_another_run_is_the_same_bytes(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    agents = Agents(gateway())
    for call in every_role(agents):
        await call()
    first = [r.raw for r in fake.requests]
    for call in every_role(agents, OTHER_RUN, OTHER_WORKSPACE):
        await call()
    again = [r.raw for r in fake.requests[len(first):]]
    assert again == first


async def test_each_role_runs_on_its_model_even_when_called_concurrently(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    models = {"default": MODEL, "coder": "claude-sonnet-5", "reviewer": "claude-opus-4-7"}
    agents = Agents(gateway(models, LIGHT))
    answers = await asyncio.gather(*(call() for call in every_role(agents)))
    models = {a.spend.role: a.spend.model for a in answers}
    assert models == {"planner": MODEL, "plan_reviewer": LIGHT, "coder": "claude-sonnet-5",
                      "reviewer_infrastructure": "claude-opus-4-7",
                      "debugger_direct": MODEL, "debugger_introspect": MODEL,
                      "output_processor": MODEL}
    sent = {r.body["tools"][0]["name"] + ":" + r.body["model"] for r in fake.requests}
    assert "RunAnswer:" + MODEL in sent and "JobOutput:claude-sonnet-5" in sent


async def test_derived_usage_grows_with_the_prompt(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    agents = Agents(gateway())
    short = await agents.plan_goal(plan_request())
    long = await agents.plan_goal(plan_request(goal="Do iris species differ? " * 100))
    assert short.spend.usage.input_tokens == len(fake.requests[0].raw) // 4
    assert long.spend.usage.input_tokens > short.spend.usage.input_tokens + 500
    assert short.spend.usage.output_tokens > 0


def test_every_role_prompt_ships_with_the_package() -> None:
    folder = resources.files("activities.agents").joinpath("prompts")
    for name in ROLE_FILES:
        text = folder.joinpath(f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith("#"), name


def test_scrub_keeps_what_a_traceback_points_at() -> None:
    text = (f"{WORKSPACE}/out.csv; /srv/assay/work/{RUN_ID}/compare/attempt-1/job.py; "
            f"workflow {TASK_WORKFLOW_ID}; /usr/lib/python3.11/json/decoder.py")
    assert scrub(text, workspace=WORKSPACE, run_id=RUN_ID) == (
        "./out.csv; ./job.py; workflow <run>.task-compare; <stdlib>/json/decoder.py")
    assert scrub(text, run_id=RUN_ID).startswith("./out.csv; ./job.py;")
    assert scrub("run-1 of 3", run_id="run-1") == "run-1 of 3"


async def test_the_coder_and_debuggers_are_asked_for_intervals_in_the_estimate_format(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    agents = Agents(gateway())
    await agents.write_job(code_request())
    await agents.debug_job(debug_request("direct"))
    await agents.debug_job(debug_request("introspect"))
    form = ('`{"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "se": 0.033, "n": 442,\n'
            '  "method": "bootstrap"}`')
    for seen in fake.requests:
        system = json.dumps(seen.body["system"])
        assert json.dumps(form)[1:-1] in system, seen.body["tools"][0]["name"]
        assert "interval" in system and "inconclusive, not met" in system


async def test_the_output_processor_is_told_to_cite_intervals_and_not_overclaim(
        fake: FakeAnthropic, gateway: Callable[..., ModelGateway]) -> None:
    await Agents(gateway()).summarize_run(summary_request())
    system = json.dumps(fake.requests[0].body["system"])
    assert "cite its interval beside the value" in system
    assert "when its interval includes zero or the threshold" in system
