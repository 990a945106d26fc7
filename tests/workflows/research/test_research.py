"""ResearchWorkflow + TaskWorkflow on the time-skipping server with fake sandbox activities."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from client.assay import SUPPLY_PLAN
from tests.support.fakes import EventSink, ReportSink
from tests.support.waiting import wait_for
from tests.workflows.harness import FakeSandbox, Harness, all_on, task
from workflows.constants import run_workflow_id
from workflows.contracts.plan import Plan
from workflows.contracts.results import (
    PlanSource,
    ResearchInput,
    ResearchResult,
    RunProgress,
    RunReport,
    SuppliedPlan,
)
from workflows.research.workflow import ResearchWorkflow
from workflows.task.workflow import TaskWorkflow


async def run_plan(env: WorkflowEnvironment, queue: str, tmp_path: Path,
                   decisions: list[dict[str, Any]], max_parallel: int = 4,
                   ) -> tuple[RunReport, FakeSandbox, EventSink, ReportSink]:
    harness = Harness(env, queue, tmp_path)
    result = await harness.run(decisions, max_parallel=max_parallel)
    return result, harness.sandbox, harness.sink, harness.reports


async def test_plan_runs_in_dependency_order_and_completes(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    decisions = [task("report", deps=["a", "b"]), task("a", priority="LOW"),
                 task("b", priority="HIGH")]
    result, sandbox, sink, reports = await run_plan(time_env, task_queue, tmp_path, decisions,
                                                    max_parallel=1)
    assert sandbox.ran == ["b", "a", "report"]
    assert sorted(sandbox.deps_seen["report"]) == ["a/out.txt", "b/out.txt"]
    assert result.status == "completed"
    assert [t.status for t in result.tasks] == ["completed"] * 3
    first = result.tasks[0]
    assert first.provenance.execution.attempts == 1
    assert first.provenance.checksums["out.txt"] == first.artifacts[0].sha256
    assert result.completion_by_priority["HIGH"] == {"total": 1, "completed": 1, "rate": 1.0}
    assert reports.last is not None and reports.last.report.run_id == result.run_id
    types = {(e.node_id, e.event_type, e.event_subtype) for e in sink.events.values()}
    assert ("run", "checkpoint", "complete") in types
    assert ("a", "code_exec", "complete") in types
    assert ("a", "file_gen", "complete") in types


async def test_failed_task_blocks_dependants_and_names_blocker(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    decisions = [task("a", behave="crash"), task("b", deps=["a"]), task("c", deps=["b"]),
                 task("d")]
    result, sandbox, _, _ = await run_plan(time_env, task_queue, tmp_path, decisions)
    by_id = {t.task_id: t for t in result.tasks}
    assert by_id["a"].status == "failed"
    assert "nonzero_exit" in by_id["a"].status_reason
    assert by_id["b"].status == "blocked" and "task a" in by_id["b"].status_reason
    assert by_id["c"].status == "blocked" and "task b" in by_id["c"].status_reason
    assert by_id["d"].status == "completed"
    assert sorted(sandbox.ran) == ["a", "d"]
    assert result.status == "partial"


async def test_unmet_check_fails_with_the_actual_value_and_no_retry(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    checks = [{"metric": "score", "op": ">", "value": 0.95}]
    result, _, _, _ = await run_plan(time_env, task_queue, tmp_path, [task("a", checks=checks)])
    only = result.tasks[0]
    assert only.status == "failed"
    assert "acceptance criteria not met" in only.status_reason
    assert "score = 0.9, expected > 0.95" in only.status_reason
    assert only.checks[0].passed is False


async def test_task_without_job_is_deferred_with_what_would_unblock_it(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    result, sandbox, _, _ = await run_plan(time_env, task_queue, tmp_path,
                                           [task("a", job=False), task("b", deps=["a"])])
    assert result.tasks[0].status == "deferred"
    assert "add a `job`" in result.tasks[0].status_reason
    assert result.tasks[1].status == "blocked"
    assert sandbox.ran == []


async def test_cyclic_plan_fails_the_run_naming_the_cycle(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    plan = Plan.model_construct(decisions=[
        Plan.model_validate({"decisions": [task("a", deps=["b"])]}).decisions[0],
        Plan.model_validate({"decisions": [task("b", deps=["a"])]}).decisions[0],
    ])
    with pytest.raises(WorkflowFailureError) as info:
        await run_plan_raw(time_env, task_queue, plan)
    assert "dependency cycle among tasks: a, b, a" in str(info.value.cause)


async def run_plan_raw(env: WorkflowEnvironment, queue: str, plan: Plan) -> ResearchResult:
    run_id = run_workflow_id("cyclic", uuid.uuid4().hex)
    req = ResearchInput(run_id=run_id, plan_name="cyclic", plan_sha256="0" * 64, plan=plan,
                        queues=all_on(queue))
    sink = EventSink()
    async with Worker(env.client, task_queue=queue, workflows=[ResearchWorkflow, TaskWorkflow],
                      workflow_failure_exception_types=[Exception],
                      activities=[sink.activity()]):
        return await env.client.execute_workflow(ResearchWorkflow.run, req, id=run_id,
                                                 task_queue=queue)


async def test_the_report_gets_the_plans_dependencies_and_each_tasks_phase_times(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    decisions = [task("a"), task("b", deps=["a"])]
    _, _, _, reports = await run_plan(time_env, task_queue, tmp_path, decisions)

    assert reports.last is not None
    report = reports.last.report
    assert report.dependencies == {"a": [], "b": ["a"]}
    whole = reports.tasks["b"]
    assert [m.phase for m in whole.phases] == ["implement", "review", "execute", "verify",
                                               "finalize"]
    times = [m.at for m in whole.phases]
    assert whole.started_at is not None and whole.finished_at is not None
    assert whole.started_at <= times[0] and times == sorted(times)
    assert times[-1] <= whole.finished_at


async def test_a_supplied_plans_sha256_and_author_reach_the_report(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.goal_request("goal", agents={"no_model": "wait"})
    plan = Plan.model_validate({"decisions": [task("a")]})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=harness.queue)

        async def waiting() -> bool:
            return (await handle.query(ResearchWorkflow.progress)).status == "waiting"

        await wait_for(waiting, timeout=20, what="the run to wait for a plan")
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="**bold** not a digest",
                                          plan=plan, by="ada"), result_type=RunProgress)
        assert "plan_sha256: give the plan's sha256" in str(refused.value.cause)
        await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            SUPPLY_PLAN, SuppliedPlan(plan_name="p", plan_sha256="2" * 64, plan=plan,
                                      by="ada"), result_type=RunProgress)
        result = await handle.result()
    assert result.supplied_plan == PlanSource(sha256="2" * 64, by="ada", name="p")
    assert result.plan_sha256 == "1" * 64  # the goal's digest, still the run's identity
    assert harness.reports.last is not None
    assert harness.reports.last.report.supplied_plan == result.supplied_plan
