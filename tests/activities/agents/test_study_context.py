"""What a study's planner and plan reviewer are told: what the study stops on, which cycle of
how many, the tree, the decision, and the reusable tasks with their files' first lines; and
that a reused task's files reach the coder with their first lines, not by name only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from activities.agents import render
from activities.agents.roles import Agents
from activities.artifacts.store import LocalArtifactStore
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import DRAFT, KEY, MODEL, code_request, plan_request
from tests.activities.agents.test_study_prompt import context
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import outcome, summary
from workflows.contracts.execution import Artifact, DependencyArtifact
from workflows.contracts.hypotheses import HypothesisTest
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.roles import PlanDraftOutput, PlanReviewRequest
from workflows.contracts.study import StudyContext, StudyPolicy, StudyState, context_of

START = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = StudyPolicy(max_cycles=3, budget_usd=5.0,
                     acceptance=[HypothesisTest(metric="cv_r2", op=">=", threshold=0.5)],
                     key_metric={"name": "cv_r2", "direction": "maximize"})  # type: ignore[arg-type]


def review_request(ctx: StudyContext | None) -> PlanReviewRequest:
    req = plan_request()
    return PlanReviewRequest(run_id=req.run_id, goal=req.goal, data=req.data,
                             draft=PlanDraftOutput.model_validate(DRAFT), study=ctx)


def test_the_next_cycle_is_given_the_studys_policy_and_spending() -> None:
    state = StudyState(study_id="s", goal="g", policy=POLICY, spent_usd=1.25, cycles=2)
    ctx = context_of(state)
    assert ctx.policy == POLICY and ctx.spent_usd == 1.25 and ctx.cycle == 3


@pytest.mark.parametrize("reader", ["planner", "plan_reviewer"])
def test_both_readers_are_told_what_the_study_stops_on_and_that_this_cycle_is_last(
        reader: str) -> None:
    ctx = context(cycle=3, policy=POLICY, spent_usd=1.25)
    text = (render.plan_message(plan_request(study=ctx)) if reader == "planner"
            else render.plan_review_message(review_request(ctx)))
    study = text[text.index("## Study"):]
    assert "This is cycle 3 of at most 3. It is the study's last cycle: plan it to conclude" \
        in study
    assert "all its acceptance criteria hold: `cv_r2 >= 0.5`" in study
    assert "Key metric: `cv_r2` (higher is better)" in study
    assert "Budget: $5.00, of which $1.2500 is spent." in study
    assert "Decision for this cycle: pivot: pursue H3" in study
    assert "- H3 (parent H1) [open]" in study and "### Cycle 1:" in study


def test_an_earlier_cycle_says_how_many_may_follow() -> None:
    text = render.plan_message(plan_request(study=context(cycle=1, policy=POLICY)))
    assert "This is cycle 1 of at most 3. After it, at most 2 more cycles may run." in text
    assert "last cycle" not in text


def test_the_plan_reviewer_sees_the_study_before_the_draft_and_what_to_check() -> None:
    text = render.plan_review_message(review_request(context()))
    assert text.index("## Study") < text.index("## Draft plan")
    assert "### How to review this cycle's plan" in text and "carry out the decision" in text
    assert "### How to plan this cycle" not in text
    assert render.plan_review_message(review_request(None)).count("## Study") == 0


def test_a_hypothesis_test_is_reported_and_never_made_a_check() -> None:
    for ctx in (context(), context(cycle=1, previous=[], carried=[], decision=None)):
        text = render.plan_message(plan_request(study=ctx))
        assert "best as a check" not in text
        assert "never make the test's threshold a check" in text
        assert "Checks are for the task's own correctness" in text


def test_a_first_cycle_is_not_told_to_carry_out_a_decision() -> None:
    first = render.plan_message(plan_request(study=context(
        cycle=1, previous=[], carried=[], decision=None)))
    assert "carry out the decision above" not in first
    assert "Plan the study's first cycle" in first
    assert "carry out the decision above" in render.plan_message(plan_request(study=context()))


def cycle_with_report(tmp_path: Path, store: LocalArtifactStore) -> StudyContext:
    """A first cycle whose ``data`` task wrote a CSV and a PNG, its report on disk."""
    (tmp_path / "clean.csv").write_text("age,bmi,y\n59,32.1,151\n48,21.6,75\n")
    (tmp_path / "plot.png").write_bytes(b"\x89PNG\x00")
    artifacts = [Artifact(name=n, size=1, sha256=store.put(tmp_path / n).sha256)
                 for n in ("clean.csv", "plot.png")]
    report = RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64, status="completed",
                       timestamp="20260101_000000", started_at=START, finished_at=START,
                       status_reason="completed", tasks=[TaskResult(
                           task_id="data", status="completed", status_reason="ok",
                           artifacts=artifacts)])
    path = tmp_path / "results.json"
    path.write_text(report.model_dump_json())
    first = summary(1, outcome("data").model_copy(update={"action": "clean the table"}))
    first = first.model_copy(update={"results_json": str(path)})
    return context(cycle=2, previous=[first], carried=[], policy=POLICY)


@pytest.fixture
async def stored_agents(fake: FakeAnthropic, tmp_path: Path) -> AsyncIterator[Agents]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield Agents(gateway, LocalArtifactStore(tmp_path / "store"))
    await gateway.aclose()


async def test_the_planner_and_reviewer_see_the_reusable_files_first_lines(
        fake: FakeAnthropic, stored_agents: Agents, tmp_path: Path) -> None:
    assert stored_agents.store is not None
    ctx = cycle_with_report(tmp_path, stored_agents.store)  # type: ignore[arg-type]
    fake.script(ToolUse(DRAFT), ToolUse({"verdict": "APPROVE"}))
    await stored_agents.plan_goal(plan_request(study=ctx))
    await stored_agents.review_plan(review_request(ctx))
    for request in fake.requests:
        text = request.body["messages"][0]["content"]
        offered = text[text.index("### Earlier tasks you may reuse"):text.index("### Carried")]
        assert "- c1.data: clean the table; files: `deps/c1.data/clean.csv`, " \
            "`deps/c1.data/plot.png`" in offered
        assert "First lines of clean.csv:\n```\nage,bmi,y\n59,32.1,151" in offered
        assert "First lines of plot.png" not in offered


async def test_a_reused_tasks_files_reach_the_coder_with_their_first_lines(
        fake: FakeAnthropic, stored_agents: Agents, tmp_path: Path) -> None:
    store = stored_agents.store
    assert isinstance(store, LocalArtifactStore)
    (tmp_path / "clean.csv").write_text("age,bmi,y\n59,32.1,151\n")
    reused = [DependencyArtifact(task_id="c1.data", name="clean.csv", path="/elsewhere",
                                 sha256=store.put(tmp_path / "clean.csv").sha256)]
    fake.script(ToolUse({"code": "print(1)", "reasoning": "r"}))
    await stored_agents.write_job(code_request(
        reused=reused, dependency_artifacts=["deps/c1.data/clean.csv"]))
    text: Any = fake.requests[0].body["messages"][0]["content"]
    told = text[text.index("## What earlier task c1.data wrote (reused, read-only)"):]
    assert "deps/c1.data/clean.csv:\n```\nage,bmi,y\n59,32.1,151\n```" in told
    assert json.dumps(code_request().model_dump()) and "What earlier task" not in \
        render.code_message(code_request())
