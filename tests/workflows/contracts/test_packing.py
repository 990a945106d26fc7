"""A run's input packs a plan of over 1 000 tasks, and only such a plan."""

from __future__ import annotations

import json

import pydantic_core

from tests.workflows.harness import task
from workflows.contracts.batches import BatchResult, pack_results
from workflows.contracts.lines import BranchInput
from workflows.contracts.plan import Plan
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchInput, TaskResult


def run_input(tasks: int) -> ResearchInput:
    plan = Plan.model_validate({"decisions": [task(f"t{i:05d}") for i in range(tasks)]})
    return ResearchInput(run_id="run", plan_name="sweep", plan_sha256="0" * 64, plan=plan)


def test_a_run_of_a_thousand_tasks_sends_its_plan_as_before() -> None:
    sent = json.loads(pydantic_core.to_json(run_input(1000)))
    assert len(sent["plan"]["decisions"]) == 1000 and "packed_plan" not in sent
    assert "batch_tasks" not in sent["policy"]


def test_a_larger_plan_goes_packed_in_chunks_and_reads_back_whole() -> None:
    req = run_input(2600)
    sent = pydantic_core.to_json(req)
    assert len(sent) < 60_000  # 1.3 MB of decisions as JSON
    received = ResearchInput.model_validate_json(sent)
    assert received.plan is None and len(received.packed_plan) == 1 + 6  # head, 500 a chunk
    assert received.with_plan() == req


def test_a_branch_input_unpacks_its_large_plan_when_read() -> None:
    req = run_input(1500)
    assert req.plan is not None
    branch = BranchInput.model_validate({"run_id": "run", "plan_name": "sweep",
                                         "plan_sha256": "0", "order": [], "plan": req.plan,
                                         "record": {"name": "b", "workflow_id": "w",
                                                    "from_task": "t00000"}})
    sent = pydantic_core.to_json(branch)
    assert len(sent) < 60_000
    assert BranchInput.model_validate_json(sent).plan == req.plan


def test_a_batch_hands_back_its_results_packed() -> None:
    results = [TaskResult(task_id=f"t{i}", status="completed", status_reason="ok")
               for i in range(500)]
    assert BatchResult(number=1, tasks=pack_results(results)).results() == results
    assert RunPolicy(batch_tasks=2).model_dump(mode="json")["batch_tasks"] == 2
