"""How the roles fail: budgets, answers repaired or refused, unsafe fixes, and the run's
own recording, recorded live and replayed with the server gone."""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.agents.roles import Agents
from activities.artifacts.store import LocalArtifactStore
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import (
    CODE,
    DRAFT,
    FIX_ANSWER,
    JOB_ANSWER,
    KEY,
    MODEL,
    RUN_ID,
    code_request,
    debug_request,
    plan_request,
    review_request,
    summary_request,
)
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse, usage
from workflows.contracts.policy import ModelRecording
from workflows.contracts.roles import MAX_CODE_CHARS
from workflows.contracts.spend import Budget, Usage

GONE = "http://127.0.0.1:9"
"""Where no server listens: a replay must not need one."""


async def failure(call: Awaitable[Any]) -> ApplicationError:
    with pytest.raises(ApplicationError) as err:
        await call
    assert err.value.non_retryable, err.value
    return err.value


def repair_text(fake: FakeAnthropic, n: int) -> str:
    """What the ``n``-th request told the model to fix."""
    turn = fake.requests[n].body["messages"][-1]["content"][0]
    return str(turn.get("content") or turn.get("text"))


async def test_an_exhausted_budget_stops_the_role_before_any_request(
        fake: FakeAnthropic, agents: Agents) -> None:
    spent = Budget(max_tokens=1000, spent=Usage(input_tokens=1000))
    err = await failure(agents.plan_goal(plan_request(budget=spent)))
    assert err.type == "BudgetExhausted" and "token budget of 1000" in str(err)
    assert "role 'planner'" in str(err)
    assert fake.requests == []


async def test_code_that_does_not_parse_is_sent_back_and_repaired(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({**JOB_ANSWER, "code": "def broken(:\n"}, usage=usage(500, 50)),
                ToolUse(JOB_ANSWER, usage=usage(700, 60)))
    answer = await agents.write_job(code_request())
    assert answer.job.code == CODE
    assert (answer.spend.calls, answer.spend.repairs) == (2, 1)
    assert (answer.spend.usage.input_tokens, answer.spend.usage.output_tokens) == (1200, 110)
    said = repair_text(fake, 1)
    assert "The `JobOutput` input was rejected" in said and "does not parse" in said


async def test_an_answer_that_stays_invalid_fails_clearly(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(*[ToolUse({**JOB_ANSWER, "args": {"bad key!": 1}})] * 3)
    err = await failure(agents.write_job(code_request()))
    assert err.type == "InvalidModelOutput" and "after 2 repairs" in str(err)
    assert "argument name 'bad key!'" in str(err)
    assert len(fake.requests) == 3
    assert err.details[0]["usage"]["input_tokens"] == 300


async def test_oversize_code_is_refused(fake: FakeAnthropic, agents: Agents) -> None:
    huge = "x = 1\n" * (MAX_CODE_CHARS // 6 + 10)
    fake.script(*[ToolUse({**JOB_ANSWER, "code": huge})] * 3)
    err = await failure(agents.write_job(code_request()))
    assert err.type == "InvalidModelOutput" and "at `code`" in str(err)
    assert f"is too long: {len(huge)} characters, at most {MAX_CODE_CHARS}" in str(err)


async def test_an_unknown_tool_or_prose_is_sent_back(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(DRAFT, name="submit_plan"), Text("Here is my plan..."), ToolUse(DRAFT))
    answer = await agents.plan_goal(plan_request())
    assert answer.spend.repairs == 2
    assert "There is no tool named 'submit_plan'" in repair_text(fake, 1)
    assert "did not call the `PlanDraftOutput` tool" in repair_text(fake, 2)


async def test_a_plan_with_a_cycle_or_unknown_input_is_sent_back(
        fake: FakeAnthropic, agents: Agents) -> None:
    tasks = DRAFT["tasks"]
    cyclic = {"tasks": [{**tasks[0], "dependencies": ["compare"]}, tasks[1]]}
    unknown = {"tasks": [{**tasks[0], "inputs": ["penguins.csv"]}]}
    fake.script(ToolUse(cyclic), ToolUse(unknown), ToolUse(DRAFT))
    answer = await agents.plan_goal(plan_request())
    assert answer.spend.repairs == 2
    assert "dependency cycle among tasks: profile, compare, profile" in repair_text(fake, 1)
    assert "reads penguins.csv, which the goal does not provide" in repair_text(fake, 2)


async def test_an_approval_with_critical_problems_is_sent_back(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"verdict": "APPROVE", "confidence": 0.9, "critical": ["no seed"]}),
                ToolUse({"verdict": "APPROVE", "confidence": 0.9, "warnings": ["no seed"]}))
    answer = await agents.review_job_model(review_request())
    assert answer.verdict.verdict == "APPROVE" and not answer.verdict.critical
    assert "cannot list critical problems" in repair_text(fake, 1)


@pytest.mark.parametrize(("fix", "said"), [
    ({**FIX_ANSWER, "requirements": ["pandas @ https://example.org/pandas.whl"]},
     "names a direct URL"),
    ({**FIX_ANSWER, "requirements": ["--index-url=http://mirror"]},
     "must start with a package name"),
    ({**FIX_ANSWER, "code": CODE}, "identical to the job that failed"),
    ({**FIX_ANSWER, "code": "import os\nos.system('rm -rf /' \n"}, "does not parse"),
    ({"diagnosis": "x", "code": "", "confidence": 0.5}, "at `code`"),
    ({**FIX_ANSWER, "confidence": 7}, "at `confidence`"),
])
async def test_an_unsafe_or_ill_formed_fix_fails_clearly(
        fake: FakeAnthropic, agents: Agents, fix: dict[str, Any], said: str) -> None:
    fake.script(*[ToolUse(fix)] * 3)
    err = await failure(agents.debug_job(debug_request()))
    assert err.type == "InvalidModelOutput" and said in str(err)
    assert "role 'debugger_direct'" in str(err) and len(fake.requests) == 3


async def test_a_debugger_answer_that_is_not_an_object_fails_clearly(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(*[ToolUse("print('fixed')")] * 3)
    err = await failure(agents.debug_job(debug_request()))
    assert err.type == "InvalidModelOutput" and "must be a JSON object" in str(err)


async def test_the_runs_recording_answers_a_re_run_with_the_server_gone(tmp_path: Path) -> None:
    folder = tmp_path / "agents-host" / "recordings"
    with FakeAnthropic() as fake:
        fake.script(Text("planning...", usage=usage(400, 30)), ToolUse(DRAFT, usage=None))
        # The worker's own replay path is overridden by the run's recording.
        gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                               replay_path=tmp_path / "absent.jsonl", recordings_dir=folder)
        live = await Agents(gateway).plan_goal(
            plan_request(recording=ModelRecording(mode="record", name="run-models")))
        await gateway.aclose()
    path = folder / "recorded" / "run-models.jsonl"  # inside the worker's own folder
    assert len(path.read_text().splitlines()) == 2
    store = LocalArtifactStore(tmp_path / "store")
    digest = store.put(path).sha256
    cache = tmp_path / "other-host" / "recordings"
    offline = ModelGateway(None, GONE, {"default": MODEL}, store=store, recordings_dir=cache)
    replay = ModelRecording(mode="replay", sha256=digest)
    again = await Agents(offline).plan_goal(
        plan_request(run_id="assay-run-iris-morphology-1c0e5f0a2b-r2", recording=replay))
    assert again.draft == live.draft
    assert again.spend.replayed and not live.spend.replayed
    assert again.spend.model_copy(update={"replayed": False}) == live.spend
    assert again.spend.repairs == 1 and again.spend.exchange_ids == live.spend.exchange_ids
    assert (cache / f"{digest}.jsonl").is_file()
    absent = ModelRecording(mode="replay", sha256="0" * 64)
    err = await failure(Agents(offline).plan_goal(plan_request(recording=absent)))
    assert err.type == "ReplayMiss" and err.non_retryable and "artifact store" in str(err)


@pytest.mark.parametrize("mode", ["record", "replay"])
async def test_a_recording_named_by_a_host_path_is_refused_untouched(
        tmp_path: Path, mode: Literal["record", "replay"]) -> None:
    created = tmp_path / "any" / "new" / "dir" / "x.jsonl"
    secret = tmp_path / "secret"
    secret.write_text("not a recording\n")
    folder = tmp_path / "recordings"
    hostile = [ModelRecording(mode=mode, path=str(created if mode == "record" else secret)),
               ModelRecording(mode=mode, path=str(secret), sha256="0" * 64, name="x"),
               ModelRecording(mode=mode),  # neither a name nor a digest
               ModelRecording.model_construct(mode=mode, name="../../escape", sha256=None,
                                              path=None)]  # past the contract's check
    with FakeAnthropic() as fake:
        fake.script(*[ToolUse(DRAFT)] * len(hostile))
        gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                               store=LocalArtifactStore(tmp_path / "store"),
                               recordings_dir=folder)
        for recording in hostile:
            err = await failure(Agents(gateway).plan_goal(plan_request(recording=recording)))
            assert err.type == "RecordingRefused" and err.non_retryable, err
            assert "corrupt" not in str(err) and "assay run --record FILE" in str(err)
        await gateway.aclose()
        assert fake.requests == []
    assert not (tmp_path / "any").exists() and not (tmp_path / "escape.jsonl").exists()
    assert not folder.exists() or not list(folder.rglob("*.jsonl"))


async def test_a_replay_miss_names_the_request(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    with FakeAnthropic() as fake:
        fake.script(ToolUse(DRAFT))
        gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                               recordings_dir=folder)
        await Agents(gateway).plan_goal(
            plan_request(recording=ModelRecording(mode="record", name="run-models")))
        await gateway.aclose()
    store = LocalArtifactStore(tmp_path / "store")
    digest = store.put(folder / "recorded" / "run-models.jsonl").sha256
    offline = Agents(ModelGateway(None, GONE, {"default": MODEL}, store=store,
                                  recordings_dir=tmp_path / "cache"))
    replay = ModelRecording(mode="replay", sha256=digest)
    err = await failure(offline.plan_goal(
        plan_request(goal="Do penguin species differ?", recording=replay)))
    assert err.type == "ReplayMiss" and digest in str(err)
    assert "role 'planner'" in str(err) and "schema 'PlanDraftOutput'" in str(err)
    assert "Do penguin species differ?" in str(err)


async def test_no_key_and_no_recording_is_not_configured(fake: FakeAnthropic) -> None:
    agents = Agents(ModelGateway(None, fake.base_url, {"default": MODEL}))
    err = await failure(agents.summarize_run(summary_request()))
    assert err.type == "ModelNotConfigured" and RUN_ID not in str(err)
    assert fake.requests == []
