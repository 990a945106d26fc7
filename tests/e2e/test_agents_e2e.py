"""A free-text goal end to end: real workers, sandbox and SDK against a scripted model server.

plan -> plan review -> code -> model and deterministic review -> run -> a failing job repaired
by the debuggers -> verified -> answered -> report with token and cost totals. The run is
recorded; a second run replays the recording with the server gone and must reproduce the same
plan, job specs and statuses. No workflow history may hold the API key.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from activities.memory.memory import Memory
from activities.memory.store import MemoryStore
from client.assay import AssayClient
from tests.activities.memory.test_memory import OOM_RULE, fixed
from tests.support.e2e import (
    ROOT,
    isolated_settings,
    queue_env,
    report_of,
    store_of,
    stored_events,
    worker_env,
)
from tests.support.fake_anthropic import FakeAnthropic, text_of, tool_of
from tests.support.goal_script import GOAL, PLAN, script, sized
from tests.workers.cli.test_cli import cli
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workflows.constants import task_workflow_id
from workflows.contracts.hypotheses import Hypothesis, HypothesisTree
from workflows.contracts.results import RunReport
from workflows.contracts.study import CycleDecision, CycleSummary, StudyContext, TaskOutcome

pytestmark = pytest.mark.integration
DATA = ROOT / "tests" / "data" / "goal" / "measurements.csv"
EXAMPLE = ROOT / "examples" / "goal"
EXAMPLE_RECORDING = EXAMPLE / "recording.jsonl"
API_KEY = "sk-ant-test-0123456789-NEVER-IN-HISTORY"


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        script(fake)
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr(API_KEY), "anthropic_base_url": fake.base_url})
        stop = asyncio.Event()
        running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                                database_url=fresh_database_url, stop=stop,
                                                client=dev_env.client))
        yield settings, fake
        stop.set()
        await running


async def run_goal(client: AssayClient, settings: Settings, flags: AgentFlags, *,
                   data: Path = DATA) -> RunReport:
    policy = build_policy(settings, agents=flags)
    req = load_goal(GOAL, [data], max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    run_id = await client.start_run(req, again=True)
    return report_of(await asyncio.wait_for(client.result(run_id), timeout=180))


async def test_a_goal_is_planned_coded_repaired_answered_and_replayed(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path, fresh_database_url: str) -> None:
    settings, fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    recording = tmp_path / "goal.jsonl"
    result = await run_goal(client, settings, AgentFlags(record=recording))

    assert result.status == "completed", result.status_reason
    tasks = {t.task_id: t for t in result.tasks}
    assert tasks["describe"].provenance.job_author == "coder:fast"
    assert tasks["describe"].metrics["rows"] == 24
    compare = tasks["compare"]
    assert compare.provenance.job_author.startswith("debugger:"), compare.status_reason
    assert compare.metrics["difference"] > 0
    assert compare.metrics["p_value"] == pytest.approx(2.838e-07, rel=1e-3)
    assert compare.provenance.execution.attempts >= 2
    chosen = [p for p in compare.provenance.patches if p.outcome == "applied"]
    assert len(chosen) == 1 and chosen[0].decision == "debugger:direct+introspect+diagnostic"
    assert result.answer is not None and "group b" in result.answer.answer
    events = [s.event for s in await stored_events(fresh_database_url, result.run_id)]
    answered = {e.agent_name for e in events
                if e.event_type == "agent_call" and e.status == "answered"}
    assert answered == {"planner", "plan_reviewer", "coder", "reviewer_ops",
                        "reviewer_quality_safety", "reviewer_infrastructure", "debugger_direct",
                        "debugger_introspect", "debugger_diagnostic", "output_processor"}
    assert any(e.agent_name == "debugger_diagnostic" and e.event_type == "code_exec"
               for e in events)

    # the dependent task's coder was told what its dependency found: verified metrics, checks
    # and the first lines of its text artifact, not only the file's name
    coder = [json.loads(text_of(r.body))[1][0]["content"] for r in fake.requests
             if tool_of(r.body) == "JobOutput"]
    (asked,) = [m for m in coder if "Welch" in m and "fast:" in m]
    told = asked[asked.index("## What dependency describe found"):]
    assert "- status: completed" in told and '- metrics: {"rows": 24}' in told, told
    assert 'summary.json:\n```\n{\n  "rows": 24,' in told, told
    assert all("What dependency" not in m for m in coder if "Welch" not in m)

    # every request the server answered is accounted for, per task and for the run
    exchanges = [json.loads(line) for line in recording.read_text().splitlines()]
    assert result.model.calls == len(fake.requests) == len(exchanges)
    assert result.model.usage.input_tokens == sum(e["usage"]["input_tokens"]
                                                  for e in exchanges)
    assert result.model.usage.output_tokens == sum(e["usage"]["output_tokens"]
                                                   for e in exchanges)
    assert sum(t.model.calls for t in result.tasks) + result.model.calls_by_role["planner"] \
        + result.model.calls_by_role["plan_reviewer"] \
        + result.model.calls_by_role["output_processor"] == result.model.calls
    assert result.model.usage.cost_usd > 0
    assert result.report is not None
    summary = Path(result.report.summary_md).read_text()
    assert "## Model use" in summary and "## Answer" in summary
    assert "Welch's two-sided t-test gives t = 7.549" in summary
    assert "`p_value` = 2.838e-07" in summary
    assert "![comparison.png](artifacts/compare/comparison.png)" in summary
    assert "  Group b's mean exceeds group a's by 1.04 (Welch's t = 7.55" in summary
    assert "![Timeline of the tasks by phase](figures/timeline.png)" in summary
    assert '["compare<br/>completed"]:::completed' in summary
    folder = Path(result.report.summary_md).parent
    assert (folder / "artifacts" / "compare" / "comparison.png").read_bytes().startswith(
        b"\x89PNG")

    if os.environ.get("ASSAY_SAVE_EXAMPLE_RECORDING"):  # `make example-recording`
        shutil.copyfile(recording, EXAMPLE_RECORDING)
    await assert_no_key_in_histories(dev_env, result)
    assert API_KEY not in recording.read_text()
    assert all(API_KEY in (r.headers.get("x-api-key", "") + r.headers.get("authorization", ""))
               for r in fake.requests)  # the key went to the server, and only there

    # the same goal, replayed from the recording with the server gone
    fake.stop()
    seen = len(fake.requests)
    replayed = await run_goal(client, settings, AgentFlags(replay=recording))
    assert replayed.run_id != result.run_id
    assert replayed.plan == result.plan
    assert {t.task_id: (t.status, t.provenance.job_sha256, t.provenance.job_author)
            for t in replayed.tasks} == {t.task_id: (t.status, t.provenance.job_sha256,
                                                     t.provenance.job_author)
                                         for t in result.tasks}
    assert replayed.answer == result.answer
    # the same calls, tokens and cost; the cost's last bits follow the order concurrent
    # calls finished in (a float sum), so it is compared to a relative 1e-9
    assert replayed.model.usage.model_copy(update={"cost_usd": 0}) == \
        result.model.usage.model_copy(update={"cost_usd": 0})
    assert replayed.model.usage.cost_usd == pytest.approx(result.model.usage.cost_usd,
                                                          rel=1e-9)
    assert len(fake.requests) == seen


async def assert_no_key_in_histories(env: WorkflowEnvironment, result: RunReport) -> None:
    """Neither the key nor any part of it is in the run's or its tasks' histories."""
    ids = [result.run_id, *(task_workflow_id(result.run_id, t.task_id) for t in result.tasks)]
    for workflow_id in ids:
        history = await env.client.get_workflow_handle(workflow_id).fetch_history()
        text = history.to_json()
        decoded = "\n".join(_payload_texts(json.loads(text)))
        assert decoded, "payloads were found and decoded"
        for haystack in (text, decoded):
            assert API_KEY not in haystack and API_KEY[-20:] not in haystack


def _payload_texts(node: Any) -> list[str]:
    """Every payload's data in a history, decoded from base64."""
    found: list[str] = []
    if isinstance(node, dict):
        fields = cast("dict[str, Any]", node)
        data = fields.get("data")
        if isinstance(data, str) and "metadata" in fields:
            found.append(base64.b64decode(data).decode("utf-8", "replace"))
        for value in fields.values():
            found.extend(_payload_texts(value))
    elif isinstance(node, list):
        for item in node:  # pyright: ignore[reportUnknownVariableType]
            found.extend(_payload_texts(item))
    return found


async def test_the_example_goal_replays_offline_and_status_says_nothing_was_spent(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic]) -> None:
    settings, fake = served
    fake.stop()  # the recording alone answers
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    result = await run_goal(client, settings, AgentFlags(replay=EXAMPLE_RECORDING),
                            data=EXAMPLE / "measurements.csv")
    assert result.status == "completed", (
        f"{result.status_reason}: if prompts changed on purpose, re-record the example with "
        "`make example-recording`")
    assert [t.provenance.job_author.split(":")[0] for t in result.tasks] == ["coder", "debugger"]
    assert result.answer is not None
    assert result.model.calls == len(EXAMPLE_RECORDING.read_text().splitlines())
    # `assay status` of the finished run says its cost was replayed, not spent
    env = worker_env(dev_env.client.service_client.config.target_host, "postgresql://unused",
                     settings.data_dir, **queue_env(settings))
    code, out, err = await cli(env, "status", result.run_id)
    assert code == 0, err
    model = next(x for x in out.splitlines() if x.startswith("  model:"))
    assert model.endswith(f"${result.model.usage.cost_usd:.4f} (replayed from a recording: "
                          "the cost is the recorded one; nothing was spent)"), model


async def test_a_study_cycle_tells_the_planner_what_happened_and_what_memory_learned(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        fresh_database_url: str) -> None:
    """A goal run given a study's context: its planner request carries the previous cycle's
    verified metrics, its blocker and a rule memory learned, and offers hypotheses."""
    settings, fake = served
    fake.on_tool("StudyPlanDraftOutput", sized(PLAN))
    async with MemoryStore(fresh_database_url) as store:  # three tasks fixed alike: a rule
        memory = Memory(store)
        for n in (1, 2, 3):
            await memory.remember_task(fixed(f"run-{n}", minute=n))
    h1 = Hypothesis.model_validate({
        "id": "H1", "statement": "a classifier trained on the full data set separates a and b",
        "test": {"metric": "accuracy", "op": ">=", "threshold": 0.9}})
    previous = CycleSummary(
        cycle=1, run_id="goal-earlier", plan_sha256="0" * 64, status="completed",
        tasks=[TaskOutcome(task_id="fit", status="completed", hypothesis="H1",
                           metrics={"accuracy": 0.7321}, checks_passed=1, checks_declared=1,
                           wall_s=41.0, estimated_s=30.0)],
        tasks_total=1, blockers=["the GPU queue was closed for maintenance"])
    study = StudyContext(study_id="study-e2e", cycle=2, tree=HypothesisTree(hypotheses=[h1]),
                         previous=[previous],
                         decision=CycleDecision(action="fix", hypotheses=["H1"],
                                                reason="H1 is inconclusive: rerun it"))
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    policy = build_policy(settings, agents=AgentFlags())
    req = load_goal(GOAL, [DATA], max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    run_id = await client.start_run(req.model_copy(update={"study": study}), again=True)
    result = report_of(await asyncio.wait_for(client.result(run_id), timeout=180))
    assert result.status == "completed", result.status_reason

    (asked,) = [json.loads(text_of(r.body))[1][0]["content"] for r in fake.requests
                if tool_of(r.body) == "StudyPlanDraftOutput"]
    assert "- fit [completed] (hypothesis H1): verified metrics: accuracy = 0.7321" in asked
    assert "time under 1 min (estimated under 1 min)" in asked
    assert "Blockers:\n- the GPU queue was closed for maintenance" in asked
    taught = asked[asked.index("## What earlier runs taught"):asked.index("## Study")]
    assert f"- rule {OOM_RULE} for tasks like" in taught and "args.batch_size" in taught
    assert "Decision for this cycle: fix, because H1 is inconclusive: rerun it" in asked
    assert all(tool_of(r.body) != "PlanDraftOutput" for r in fake.requests)
