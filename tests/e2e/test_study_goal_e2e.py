"""A goal study planned by the (scripted) model end to end, over three cycles.

The dev server with every pool in this process, the real sandbox and the real memory store:
cycle 1 cleans the data, refutes the straight line (H1) by its verified r2 and leaves a
failed plot as a blocker; the rules pivot to the parabola (H2), whose cycle-2 job fails; the
rules ask to fix it, and cycle 3 fits the parabola to cycle 1's cleaned data, reused by
reference (not cleaned again), meeting the acceptance criterion: the study stops. The
planner's requests prove what it was told: the first cycle's verified metric, the blocker,
the rule memory learned, and which earlier tasks it may reuse.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from activities.memory.memory import Memory, rule_id_for
from activities.memory.store import MemoryStore
from client.study import StudyClient
from tests.activities.memory.test_memory import fixed, train_job
from tests.support.e2e import isolated_settings, pools_serving, store_of
from tests.support.fake_anthropic import FakeAnthropic, text_of, tool_of
from tests.support.study_script import EXAMPLE, GOAL, REFUSED, script
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.settings import Settings
from workflows.contracts.cycles import StudyInput, StudyResult
from workflows.contracts.kinds import task_kind
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import RunReport
from workflows.contracts.study import StudyPolicy, StudyState
from workflows.study.verdicts import shown

pytestmark = pytest.mark.integration
API_KEY = "sk-ant-test-study-0123456789"
REMEMBERED = "Fit a parabola to the points"
"""What earlier runs did (out of memory, fixed alike three times: a rule memory learned)."""


def planner_prompts(fake: FakeAnthropic) -> dict[int, list[str]]:
    """The planner's requests of each cycle (their message), by the cycle the study told it."""
    prompts: dict[int, list[str]] = {}
    for request in fake.requests:
        if tool_of(request.body) == "StudyPlanDraftOutput":
            message: str = json.loads(text_of(request.body))[1][0]["content"]
            cycle = int(message.split("This is cycle ", 1)[1].split(" ", 1)[0])
            prompts.setdefault(cycle, []).append(message)
    return prompts


async def run_study(env: WorkflowEnvironment, settings: Settings, policy: RunPolicy,
                    database_url: str) -> StudyResult:
    """The example's goal study (three cycles at most, stopping at r2 >= 0.95), run to its
    end with every pool in this process."""
    req = load_goal(GOAL, [EXAMPLE / "points.csv"], max_bytes=settings.max_plan_bytes,
                    policy=policy, queues=queues_from(settings), store=store_of(settings))
    study = StudyPolicy.model_validate({
        "max_cycles": 3, "key_metric": {"name": "r2", "direction": "maximize"},
        "acceptance": [{"metric": "r2", "op": ">=", "threshold": 0.95}]})
    inp = StudyInput(state=StudyState(study_id="", goal=req.goal, policy=study), plans=[],
                     data=req.data, policy=policy, queues=req.queues)
    async with pools_serving(settings, database_url, env.client):
        client = StudyClient(env.client, task_queue=settings.queue_orchestration)
        study_id = await client.start_study(inp, again=True)
        return await asyncio.wait_for(client.result(study_id), timeout=200)


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        script(server)
        yield server


@pytest.mark.timeout(240)
async def test_a_goal_study_refutes_pivots_fixes_reuses_and_stops_on_its_criterion(
        dev_env: WorkflowEnvironment, fake: FakeAnthropic, fresh_database_url: str,
        tmp_path: Path, task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
        "anthropic_api_key": SecretStr(API_KEY), "anthropic_base_url": fake.base_url})
    async with MemoryStore(fresh_database_url) as store:  # three tasks fixed alike: a rule
        memory = Memory(store)
        for n in (1, 2, 3):
            await memory.remember_task(fixed(f"run-{n}", minute=n).model_copy(
                update={"action": REMEMBERED}))
    policy = build_policy(settings, agents=AgentFlags(debuggers=False, model_review=False,
                                                      plan_review_rounds=1))
    result = await run_study(dev_env, settings, policy, fresh_database_url)

    assert (result.status, result.cycles) == ("completed", 3), result.reason
    assert result.reason.startswith("acceptance criteria met: r2 = "), result.reason
    assert result.report is not None
    state = StudyState.model_validate_json(Path(result.report.results_json).read_text())
    reports = [RunReport.model_validate_json(Path(s.results_json).read_text())
               for s in state.summaries]
    first, second, third = ({t.task_id: t for t in r.tasks} for r in reports)
    assert [s.decision.action for s in state.summaries if s.decision] == ["pivot", "fix",
                                                                          "stop"]
    line_r2, parabola_r2 = first["fit"].metrics["r2"], third["fit"].metrics["r2"]
    assert isinstance(line_r2, float) and isinstance(parabola_r2, float)
    assert line_r2 < 0.9 <= 0.95 <= parabola_r2
    assert result.reason == (f"acceptance criteria met: r2 = {shown(parabola_r2)} (task fit) "
                             ">= 0.95")
    assert (first["plot"].status, second["fit"].status) == ("failed", "failed")
    assert {h.id: h.status for h in state.tree.hypotheses} == {"H1": "refuted",
                                                               "H2": "supported"}

    prompts = planner_prompts(fake)
    assert {cycle: len(asked) for cycle, asked in prompts.items()} == {1: 1, 2: 1, 3: 2}
    told = prompts[2][0]  # the first cycle's verified metric, its blocker and memory's rule
    assert f"- fit [completed] (hypothesis H1): verified metrics: r2 = {shown(line_r2)}" in told
    assert "Blockers:\n- task plot failed: " in told
    taught = told[told.index("## What earlier runs taught"):told.index("## Study")]
    learned = rule_id_for(task_kind(REMEMBERED, train_job(64)), "out_of_memory")
    assert f"- rule {learned} for tasks like" in taught
    assert "Decision for this cycle: pivot: pursue H2, because " in told
    assert "- c1.data: Clean the points table" in told
    third_asked, sent_back = prompts[3]
    offered = third_asked[third_asked.index("### Earlier tasks you may reuse"):]
    assert "- c1.data: Clean the points table" in offered
    assert "- c1.plot" not in offered and "- c2.fit" not in offered  # failed: not reusable
    assert "Decision for this cycle: fix, because " in third_asked
    assert (f"the plan is invalid: task fit: {REFUSED} (those that may be reused: c1.data, "
            "c1.fit)") in sent_back

    # cycle 3 did not clean the data again: its only task read cycle 1's verified data.csv
    assert list(third) == ["fit"]
    assert reports[2].plan is not None and reports[2].plan.decisions[0].reuse == ["c1.data"]
    cleaned = next(a for a in first["data"].artifacts if a.name == "data.csv")
    fitted = next(a for a in third["fit"].artifacts if a.name == "fit.json")
    read = json.loads(Path(fitted.path).read_text())
    assert (read["read"], read["sha256"]) == ("deps/c1.data/data.csv", cleaned.sha256)
    assert third["fit"].metrics["rows"] == 60
    coded = [text for text in (text_of(r.body) for r in fake.requests
                               if tool_of(r.body) == "JobOutput")
             if "Clean the points table" in text and "Fit a" not in text
             and "Plot the" not in text]
    assert len(coded) == 1  # the data task's job was written once, in cycle 1

    markdown = Path(result.report.summary_md).read_text(encoding="utf-8")
    assert "refuted" in markdown and "supported" in markdown
    assert "pivot" in markdown and "fix" in markdown and shown(parabola_r2) in markdown
    # the study synthesizer was told the whole record and its cited answer opens the report
    [asked] = [text_of(r.body) for r in fake.requests if tool_of(r.body) == "SynthesisOutput"]
    assert f"cycle 3, task fit [completed] (hypothesis H2): r2 = {shown(parabola_r2)}" in asked
    # cycle 1 is only a headline in the study's state: its tasks are read from its report
    assert f"cycle 1, task fit [completed] (hypothesis H1): r2 = {shown(line_r2)}" in asked
    assert "Acceptance criterion: `r2 >= 0.95`" in asked
    synthesis = markdown[markdown.index("## Synthesis"):markdown.index("## Goal")]
    assert "Written by the study synthesizer" in synthesis
    assert "> y bends with x: a parabola explains it" in synthesis
    assert "(cycle 3, task fit: r2)" in synthesis


@pytest.mark.timeout(240)
async def test_the_example_goal_study_is_replayed_offline_from_its_recording(
        dev_env: WorkflowEnvironment, fake: FakeAnthropic, fresh_database_url: str,
        tmp_path: Path, task_queue: str) -> None:
    """``examples/study-goal`` as ``make run`` runs it: every model answer from its
    recording, no server. ``make example-recording`` makes the recording again here, from
    the scripted server."""
    recording = EXAMPLE / "recording.jsonl"
    saving = bool(os.environ.get("ASSAY_SAVE_EXAMPLE_RECORDING"))
    settings = isolated_settings(tmp_path / "assay", task_queue)
    made = tmp_path / "recording.jsonl"
    if saving:
        settings = settings.model_copy(update={"anthropic_api_key": SecretStr(API_KEY),
                                               "anthropic_base_url": fake.base_url})
        flags = AgentFlags(record=made)
    else:
        fake.stop()
        flags = AgentFlags(replay=recording)
    policy = build_policy(settings, policy_file=EXAMPLE / "policy.json", agents=flags)
    result = await run_study(dev_env, settings, policy, fresh_database_url)

    assert (result.status, result.cycles) == ("completed", 3), result.reason
    assert result.reason.startswith("acceptance criteria met: r2 = "), result.reason
    assert result.report is not None
    state = StudyState.model_validate_json(Path(result.report.results_json).read_text())
    assert [s.decision.action for s in state.summaries if s.decision] == ["pivot", "fix",
                                                                          "stop"]
    if saving:
        shutil.copyfile(made, recording)
    else:
        assert fake.requests == []  # every answer came from the recording


@pytest.mark.timeout(240)
async def test_a_recording_without_the_synthesizers_answer_falls_back_to_the_deterministic_one(
        dev_env: WorkflowEnvironment, fake: FakeAnthropic, fresh_database_url: str,
        tmp_path: Path, task_queue: str) -> None:
    """A recording made before the study synthesizer existed still replays: the study ends as
    recorded and its report keeps the deterministic synthesis, saying why."""
    fake.stop()
    older = tmp_path / "older.jsonl"
    lines = (EXAMPLE / "recording.jsonl").read_text(encoding="utf-8").splitlines()
    older.write_text("".join(f"{line}\n" for line in lines
                             if json.loads(line).get("schema") != "SynthesisOutput"))
    assert len(older.read_text().splitlines()) == len(lines) - 1
    settings = isolated_settings(tmp_path / "assay", task_queue)
    policy = build_policy(settings, policy_file=EXAMPLE / "policy.json",
                          agents=AgentFlags(replay=older))
    result = await run_study(dev_env, settings, policy, fresh_database_url)

    assert (result.status, result.cycles) == ("completed", 3), result.reason
    assert result.report is not None
    markdown = Path(result.report.summary_md).read_text(encoding="utf-8")
    said = markdown[markdown.index("## Synthesis"):markdown.index("## Goal")]
    assert said.startswith("## Synthesis\n\nDeterministic, written from verified metrics "
                           "only (the study\\_synthesizer gave no answer: ReplayMiss: the "
                           "recording ")
