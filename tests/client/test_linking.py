"""What a run started from a closed run takes from it, read from a real finished run."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.linking import LinkRefusedError, linked_input, parent_input, reused_tasks
from tests.workflows.harness import Harness, task
from workflows.contracts.branches import BranchRequest
from workflows.contracts.results import ResearchInput, ResearchResult


async def finished_run(env: WorkflowEnvironment, queue: str, root: Path,
                       **policy: object) -> tuple[Harness, ResearchInput, ResearchResult]:
    """A run of three tasks that ended completed, deferred (no job) and blocked."""
    harness = Harness(env, queue, root)
    req = harness.request([task("1"), task("2", job=False), task("3", deps=["2"])], **policy)
    async with harness.worker():
        result = await env.client.execute_workflow("ResearchWorkflow", req, id=req.run_id,
                                                   task_queue=queue,
                                                   result_type=ResearchResult)
    assert [t.status for t in result.tasks] == ["completed", "deferred", "blocked"]
    return harness, req, result


def request(task_id: str = "1", by: str = "ada", name: str = "lr-0.1") -> BranchRequest:
    return BranchRequest.model_validate({"from_task": task_id, "from_phase": "execute",
                                         "by": by, "branches": [{"name": name,
                                                                 "set": {"args.lr": 0.1}}]})


async def test_the_input_the_tasks_and_the_plan_come_from_the_closed_run(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, req, result = await finished_run(time_env, task_queue, tmp_path)
    original = await parent_input(time_env.client, req.run_id)
    assert original == req
    reused = await reused_tasks(time_env.client, req.run_id, result, req.plan)
    assert linked_input(original, result, reused, request()) == req
    assert [(t.task_id, t.status) for t in reused] == [
        ("1", "completed"), ("2", "deferred"), ("3", "blocked")]
    done = reused[0]  # its whole result, from its task workflow
    assert done.artifacts and done.artifacts[0].name == "out.txt" and done.job is not None
    assert done.metrics == {"score": 0.9} and done.verdicts
    blocked = reused[2]  # no workflow: its summary in the run's result
    assert blocked.status_reason.startswith("blocked by task 2") and not blocked.artifacts


@pytest.mark.parametrize(("req", "message"), [
    (request(task_id="9"), r"unknown task '9' \(the plan's tasks: 1, 2, 3\)"),
    (request(task_id="3"), "task 3 ended blocked: it has no checkpoint to branch from"),
    (request(task_id="2"), "task 2 kept no job to branch from at execute"),
    (request(name="main"), "'main' is the run's own line"),
    (BranchRequest.model_validate({"from_task": "1", "by": "ada", "branches": [
        {"name": "up", "set": {"2:args.x": 1}}]}),
     "changes target tasks 2, which are not 1 or downstream of it"),
])
async def test_a_request_the_closed_run_cannot_take_is_refused_as_the_run_would(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        req: BranchRequest, message: str) -> None:
    _, original, result = await finished_run(time_env, task_queue, tmp_path)
    reused = await reused_tasks(time_env.client, original.run_id, result, original.plan)
    with pytest.raises(LinkRefusedError, match=message):
        linked_input(original, result, reused, req)


async def test_only_the_policys_approvers_may_branch_it(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, original, result = await finished_run(time_env, task_queue, tmp_path,
                                             branching={"approvers": ["ada"]})
    reused = await reused_tasks(time_env.client, original.run_id, result, original.plan)
    with pytest.raises(LinkRefusedError, match=r"'eve' may not branch this run \(allowed: ada"):
        linked_input(original, result, reused, request(by="eve"))
    assert linked_input(original, result, reused, request(by="ada")) == original


async def test_a_run_that_ran_no_plan_has_nothing_to_branch_from(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    _, original, result = await finished_run(time_env, task_queue, tmp_path)
    with pytest.raises(LinkRefusedError, match="ran no plan; there is no task to branch"):
        linked_input(original.model_copy(update={"plan": None}),
                     result.model_copy(update={"plan": None}), [], request())


async def test_the_tasks_come_from_the_line_the_closed_run_kept(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    second = task("2", deps=["1"], score=0.5)
    second["branches"] = [{"name": "high", "kind": "optimisation", "set": {"args.score": 0.95}}]
    req = harness.request([task("1"), second, task("3", deps=["2"])],
                          branching={"metric": {"name": "score", "direction": "maximize"}})
    async with harness.worker():
        result = await time_env.client.execute_workflow(
            "ResearchWorkflow", req, id=req.run_id, task_queue=task_queue,
            result_type=ResearchResult)
    assert result.branches is not None and result.branches.kept == {"2:planned#1": "high"}
    reused = await reused_tasks(time_env.client, req.run_id, result, req.plan)
    by_id = {t.task_id: t for t in reused}
    assert (by_id["1"].branch, by_id["2"].branch, by_id["3"].branch) == (None, "high", "high")
    assert by_id["2"].metrics["score"] == 0.95, "the kept line's result, not the main line's"
    assert by_id["2"].status_reason.endswith("(line high, kept by best)")
    assert by_id["3"].artifacts and by_id["3"].job is not None
