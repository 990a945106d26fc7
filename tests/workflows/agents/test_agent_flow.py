"""How the workflows use agents: planning a goal, coding, model reviews, debuggers, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from client.assay import SUPPLY_PLAN
from tests.support.waiting import wait_for
from tests.workflows.agents_fakes import (
    FakeAgents,
    job,
    model_reject,
    probe_environment,
    spend,
)
from tests.workflows.harness import Harness, task
from workflows.contracts.plan import Plan
from workflows.contracts.results import RunProgress, RunReport, SuppliedPlan
from workflows.contracts.roles import (
    DataFile,
    DebugAnswer,
    ModelReviewRequest,
    PlanDraftOutput,
    PlannedTask,
    PlanReviewOutput,
)
from workflows.contracts.verdicts import Finding, ReviewVerdict
from workflows.research.workflow import ResearchWorkflow

ON: dict[str, Any] = {"agents": {"enabled": True}, "tiering": "full"}
"""Models on, every task full: these tests are about the whole panel and the debuggers."""
DATA = [DataFile(name="table.csv", path="/data/table.csv", sha256="a" * 64, size=10,
                 head="x,y\n1,2\n")]


def draft(*tasks: PlannedTask) -> PlanDraftOutput:
    return PlanDraftOutput(context="plan", tasks=list(tasks))


def planned(tid: str, deps: list[str] | None = None, inputs: list[str] | None = None,
            ) -> PlannedTask:
    return PlannedTask(task_id=tid, action=f"do {tid}", acceptance_criteria=["done"],
                       dependencies=deps or [], inputs=inputs or [])


async def run_goal(harness: Harness, **policy: Any) -> RunReport:
    """Run the goal; its report (each task's result, as the run had it)."""
    req = harness.goal_request("Is y larger than x?", DATA, **policy)
    async with harness.worker():
        return harness.report_of(await harness.env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=harness.queue))


def harness_for(env: WorkflowEnvironment, queue: str, root: Path,
                agents: FakeAgents) -> Harness:
    return Harness(env, queue, root, overrides=agents.overrides(), extra=[probe_environment])


async def test_a_goal_is_planned_coded_run_and_answered_with_its_costs(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft(planned("load", inputs=["table.csv"]),
                                      planned("test", deps=["load"]))],
                        jobs={"fast": job("ok")})
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await run_goal(harness, **ON)
    assert result.status == "completed", result.status_reason
    assert result.plan is not None and [d.task_id for d in result.plan.decisions] == [
        "load", "test"]
    assert [i.name for i in result.plan.decisions[0].resolved_inputs] == ["table.csv"]
    assert all(t.provenance.job_author == "coder:fast" for t in result.tasks)
    assert result.answer is not None and "load" in result.answer.answer
    # planner + plan reviewer + per task (coder + 3 model reviewers) + output processor
    assert result.model.calls == 2 + 2 * 4 + 1
    assert result.model.usage.input_tokens == 1000 * result.model.calls
    assert result.model.usage.cost_usd == pytest.approx(0.01 * result.model.calls)
    assert result.tasks[0].model.calls == 4
    assert result.model.calls_by_role["coder"] == 2
    coder_saw = agents.requests["write_job"][0]
    assert coder_saw.data[0].head == "x,y\n1,2\n" and coder_saw.goal == "Is y larger than x?"


async def test_an_invalid_draft_goes_back_to_the_planner_with_the_problems(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft(planned("a", inputs=["missing.csv"])),
                                draft(planned("a", deps=["a"])),
                                draft(planned("a"))],
                        jobs={"fast": job("ok")})
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await run_goal(harness, agents={"enabled": True, "plan_review_rounds": 2})
    assert result.status == "completed", result.status_reason
    second, third = agents.requests["plan_goal"][1:]
    assert any("missing.csv" in f and "table.csv" in f for f in second.feedback)
    assert any("depends on itself" in f or "a, a" in f for f in third.feedback), third.feedback


async def test_plan_reviewer_concerns_are_sent_back_and_a_last_rejection_defers(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft(planned("a")), draft(planned("b"))],
                        plan_verdicts=[PlanReviewOutput(verdict="REJECT", concerns=["no test"]),
                                       PlanReviewOutput(verdict="REJECT", concerns=["still"])])
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await run_goal(harness, agents={"enabled": True, "plan_review_rounds": 1})
    assert result.status == "deferred"
    assert "no acceptable plan after 2 drafts" in result.status_reason
    assert "still" in result.status_reason
    assert agents.requests["plan_goal"][1].feedback == ["no test"]
    assert result.tasks == [] and "write_job" not in agents.requests


async def test_without_a_model_a_goal_ends_deferred_and_says_why(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await run_goal(harness)
    assert result.status == "deferred"
    assert "no model is configured" in result.status_reason
    assert result.tasks == [] and result.model.calls == 0


async def test_without_a_model_a_goal_waits_for_a_persons_plan(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.goal_request("goal", DATA, agents={"no_model": "wait"})
    plan = Plan.model_validate({"decisions": [task("a")]})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=harness.queue)

        async def waiting() -> bool:
            return (await handle.query(ResearchWorkflow.progress)).status == "waiting"

        await wait_for(waiting, timeout=20, what="the run to wait for a plan")
        bad = Plan.model_validate({"decisions": [task("a", deps=["a"])]})
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="2" * 64, plan=bad,
                                          by="ada"), result_type=RunProgress)
        assert "invalid plan" in str(refused.value.cause)
        progress = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="2" * 64, plan=plan, by="ada"),
            result_type=RunProgress)
        assert progress.status == "running"
        with pytest.raises(WorkflowUpdateFailedError):  # it has a plan now
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="2" * 64, plan=plan,
                                          by="eve"), result_type=RunProgress)
        result = await handle.result()
    assert result.status == "completed", result.status_reason
    assert result.plan is not None and result.plan.decisions[0].task_id == "a"


async def test_a_plan_run_refuses_a_supplied_plan(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task("a")], gates={"plan": {"human": True}})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=harness.queue)

        async def at_the_gate() -> bool:  # intake's activities done: none is left in flight
            return (await handle.query(ResearchWorkflow.progress)).waiting is not None

        await wait_for(at_the_gate, timeout=20, what="the plan gate")
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="2" * 64,
                                          plan=req.plan or Plan(decisions=[]), by="eve"),
                result_type=RunProgress)
        assert "not waiting for a plan" in str(refused.value.cause)
        await handle.terminate("test over")


async def test_a_budget_spent_by_planning_defers_the_coder_with_the_reason(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft(planned("a"))], jobs={"fast": job("ok")})
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await run_goal(harness, agents={"enabled": True, "budget_tokens": 2000})
    only = result.tasks[0]
    assert only.status == "deferred"
    assert "model budget exhausted" in only.status_reason and "2400" in only.status_reason
    assert "write_job" not in agents.requests
    assert result.model.calls == 2 and result.answer is None


async def test_a_model_rejection_sends_a_coded_job_to_the_deep_path(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[draft(planned("a"))],
                        jobs={"fast": job("ok"), "deep": job(code="# deep\nprint('x')\n")},
                        model_verdicts=model_reject("quality_safety", "does not test y > x"))
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await run_goal(harness, **ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert only.provenance.job_author == "coder:deep"
    deep = agents.requests["write_job"][1]
    assert deep.mode == "deep" and deep.environment is not None
    assert any("does not test y > x" in f for f in deep.feedback)
    assert deep.previous_job is not None


async def test_a_model_approval_never_overrides_a_deterministic_critical_flag(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    unsafe = "import socket\nsocket.create_connection(('example.org', 80))\n"
    agents = FakeAgents()
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code=unsafe)], **ON)
    only = result.tasks[0]
    assert only.status == "rejected"
    qs = next(v for v in only.verdicts if v.reviewer == "quality_safety")
    assert qs.verdict == "REJECT" and qs.details["model"]["verdict"] == "APPROVE"
    assert harness.sandbox.ran == []


async def test_model_reviews_add_findings_to_every_reviewer(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    def warn(req: ModelReviewRequest) -> ReviewVerdict:
        return ReviewVerdict(reviewer=req.reviewer, verdict="APPROVE", confidence=0.6,
                             warnings=[Finding(code="model.warning", message="seed it")])

    agents = FakeAgents(model_verdicts=warn)
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a")], **ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert all(any(w.message == "seed it" for w in v.warnings) for v in only.verdicts)
    assert all(v.confidence <= 0.6 for v in only.verdicts)
    seen = agents.requests["review_job_model"]
    assert sorted(r.reviewer for r in seen) == ["infrastructure", "ops", "quality_safety"]


def fixes(direct: str, introspect: str, diagnostic: str) -> dict[str, DebugAnswer]:
    """Debugger answers whose fixed jobs behave as given."""
    def fix(strategy: Any, marker: str) -> DebugAnswer:
        return DebugAnswer(strategy=strategy, job=job(code=marker, args={"behave": ""}),
                           diagnosis=f"{strategy} fix",
                           confidence=0.7, spend=spend("debugger"))
    return {"direct": fix("direct", direct), "introspect": fix("introspect", introspect),
            "diagnostic_first": DebugAnswer(
                strategy="diagnostic", diagnostic_job=job("diagnose", filename="diagnose.py"),
                spend=spend("debugger")),
            "diagnostic": fix("diagnostic", diagnostic)}


async def test_debuggers_repair_a_failing_job_and_agreeing_results_win(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(fixes=fixes("# behave: ok\n# score: 0.5\nprint(1)\n",
                                    "# behave: ok\n# score: 0.8\nprint(2)\n",
                                    "# behave: ok\n# score: 0.8\nprint(3)\n"))
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code="# behave: crash\nprint(0)\n",
                                     behave="")], **ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert only.metrics["score"] == 0.8
    assert only.provenance.job_author == "debugger:introspect"
    applied = [p for p in only.provenance.patches if p.outcome == "applied"]
    assert len(applied) == 1 and applied[0].phase == "debug"
    assert len([p for p in only.provenance.patches if p.outcome.startswith("not chosen")]) == 2
    second = [r for r in agents.requests["debug_job"] if r.diagnostic_output is not None]
    assert second and "column 'x' missing" in (second[0].diagnostic_output or "")
    assert str(tmp_path) not in (second[0].diagnostic_output or "")
    introspect = next(r for r in agents.requests["debug_job"] if r.strategy == "introspect")
    assert introspect.environment is not None
    # the original, the diagnostic script and three fixes ran
    assert sorted(harness.sandbox.ran) == ["a", "a", "a", "a", "a.diagnose"]


async def test_a_fix_that_breaks_the_guardrails_never_runs(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    answers = fixes("# behave: ok\nprint(1)\n", "# behave: ok\nprint(1)\n",
                    "# behave: ok\nprint(1)\n")
    for key in ("direct", "introspect", "diagnostic"):
        fixed = answers[key].job
        assert fixed is not None
        answers[key] = answers[key].model_copy(update={"job": fixed.model_copy(
            update={"expected_artifacts": []})})
    agents = FakeAgents(fixes=answers)
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code="# behave: crash\nprint(0)\n", behave="")], **ON)
    only = result.tasks[0]
    assert only.status == "failed_retry"
    assert "no usable fix" in only.status_reason and "expected_artifacts" in only.status_reason
    assert harness.sandbox.ran == ["a", "a.diagnose"]


async def test_when_no_fix_runs_the_task_fails_naming_each_outcome(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(fixes=fixes("# behave: crash\nprint(1)\n", "# behave: crash\nprint(2)\n",
                                    "# behave: crash\nprint(2)\n"))
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a", code="# behave: crash\nprint(0)\n", behave="")], **ON)
    only = result.tasks[0]
    assert only.status == "failed_retry"
    assert "no debugger fix ran successfully" in only.status_reason
    assert "introspect+diagnostic" in " ".join(p.decision for p in only.provenance.patches)


async def test_a_failed_model_review_keeps_the_deterministic_verdict_and_charges_its_spend(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    def out_of_budget(req: ModelReviewRequest) -> ReviewVerdict:
        raise ApplicationError("model budget exhausted: token budget reached",
                               {"usage": {"input_tokens": 300, "output_tokens": 7}},
                               type="BudgetExhausted", non_retryable=True)

    agents = FakeAgents(model_verdicts=out_of_budget)
    harness = harness_for(time_env, task_queue, tmp_path, agents)
    result = await harness.run([task("a")], **ON)
    only = result.tasks[0]
    assert only.status == "completed", only.status_reason
    assert all(any(w.code == "model.unavailable" and "budget" in w.message
                   for w in v.warnings) for v in only.verdicts)
    assert only.model.usage.input_tokens == 3 * 300 and only.model.calls == 3
    answered = result.model.by_role["output_processor"].output_tokens  # the plan's answer
    assert result.model.usage.output_tokens - answered == 3 * 7


async def test_a_goal_waiting_for_a_plan_is_deferred_when_none_comes_in_time(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    result = await run_goal(harness, agents={"no_model": "wait"},
                            gates={"plan": {"timeout_s": 600}})
    assert result.status == "deferred"
    assert "no plan was supplied within 600 s" in result.status_reason
    assert "no model is configured" in result.status_reason
