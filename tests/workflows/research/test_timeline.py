"""What the Web UI shows of a run: task workflows named after the plan, found by AssayPlan.

A real run on the dev server (its visibility store answers list queries); the client reads
what the UI reads: each task workflow's static summary and details, its search attributes,
and the summaries of the activities in its history.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from client.assay import DATA_CONVERTER
from tests.support.waiting import wait_for
from tests.workflows.agents_fakes import FakeAgents, job, probe_environment
from tests.workflows.harness import Harness, task
from workflows.constants import PLAN_KEY, task_workflow_id
from workflows.contracts.roles import PlanDraftOutput, PlannedTask
from workflows.research.workflow import ResearchWorkflow

pytestmark = pytest.mark.integration


async def _task_ids(client: Client, plan: str) -> list[str]:
    return sorted([w.id async for w in client.list_workflows(
        f'AssayPlan = "{plan}" AND WorkflowType = "TaskWorkflow"')])


async def _activity_summaries(client: Client, workflow_id: str) -> dict[str, list[str]]:
    """Each scheduled activity's summary in the workflow's history, by activity type."""
    found: dict[str, list[str]] = {}
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        summary = event.user_metadata.summary
        text = DATA_CONVERTER.payload_converter.from_payload(summary, str) if (
            summary.data) else ""
        found.setdefault(name, []).append(text)
    return found


async def test_task_workflows_read_as_the_plan_and_are_found_by_assay_plan(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    plan = f"timeline-{uuid.uuid4().hex[:10]}"
    fit = task("fit", deps=["load"])
    fit["action"] = "Fit the line y ~ x\nover the loaded table"
    req = harness.request([task("load", priority="HIGH"), fit]).model_copy(
        update={"plan_name": plan})
    async with harness.worker():
        result = await dev_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue)
    assert result.status == "completed"
    wanted = sorted(task_workflow_id(req.run_id, t) for t in ("load", "fit"))

    async def listed() -> bool:
        return await _task_ids(dev_env.client, plan) == wanted

    await wait_for(listed, timeout=30, what=f"the task workflows of {plan} in visibility")

    fit_handle = dev_env.client.get_workflow_handle(task_workflow_id(req.run_id, "fit"))
    described = await fit_handle.describe()
    assert await described.static_summary() == (
        "Task fit · Fit the line y ~ x over the loaded table [MEDIUM]")
    details = await described.static_details() or ""
    assert "Fit the line y ~ x\nover the loaded table" in details
    assert "- Depends on: load" in details and "- Job: job.py" in details
    assert "- Accept when: it works" in details
    assert described.typed_search_attributes.get(PLAN_KEY) == plan

    summaries = await _activity_summaries(dev_env.client, fit_handle.id)
    assert summaries["execute_job"] == ["Task fit · run job job.py (attempt 1)"]
    assert summaries["review_ops"] == ["Task fit · review_ops reviews job.py"]
    assert summaries["verify_evidence"] == ["Task fit · verify the evidence of job.py"]


async def test_each_model_call_says_its_role_and_where_it_was_made(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(drafts=[PlanDraftOutput(tasks=[
        PlannedTask(task_id="fit", action="fit the line", acceptance_criteria=["fitted"])])],
        jobs={"fast": job("ok")})
    harness = Harness(dev_env, task_queue, tmp_path, overrides=agents.overrides(),
                      extra=[probe_environment])
    req = harness.goal_request("does y depend on x?", agents={"enabled": True})
    async with harness.worker():
        result = await dev_env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=task_queue)
    assert result.status == "completed", result.status_reason

    run = await _activity_summaries(dev_env.client, req.run_id)
    assert run["plan_goal"] == ["model call: planner (run)"]
    assert run["summarize_run"] == ["model call: output_processor (run)"]
    fit = await _activity_summaries(dev_env.client, task_workflow_id(req.run_id, "fit"))
    assert fit["write_job"] == ["model call: coder (fit)"]


async def test_a_diagnosis_says_which_failure_it_is_about(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(dev_env, task_queue, tmp_path)
    result = await harness.run([task("bad", behave="crash")])
    assert result.status == "failed"
    summaries = await _activity_summaries(dev_env.client, task_workflow_id(result.run_id, "bad"))
    assert summaries["diagnose_failure"][0] == "Task bad · diagnose the failed run (attempt 1)"
    assert summaries["execute_job"][0] == "Task bad · run job job.py (attempt 1)"
