"""Branches on the time-skipping server: a sweep from a checkpoint, compared and selected.

Real workflows and reviewers; the fake sandbox scores a job by its ``score`` argument, so the
comparator's choice is known in advance. What ran is read from the sandbox's own record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import start, task_gate_waiting, unsure_reflection
from tests.workflows.harness import Harness, task
from workflows.constants import task_workflow_id
from workflows.contracts.branches import BranchRequest, BranchTree
from workflows.contracts.errors import ErrorType
from workflows.contracts.results import ParentLink, ResearchResult, RunProgress
from workflows.research.workflow import ResearchWorkflow


@pytest.fixture
def time_env(own_time_env: WorkflowEnvironment) -> WorkflowEnvironment:
    """A server of each test's own: a cancelled run's children, whatever they still wait
    on, go with it instead of holding time still for the tests after."""
    return own_time_env


PLAN = [task("1"), task("2", deps=["1"], score=0.5), task("3", deps=["2"])]
HOLD: dict[str, Any] = {"branching": {"hold_open": True,
                                      "metric": {"name": "score", "direction": "maximize"}}}


def sweep(*scores: float, by: str = "ada", phase: str = "execute", **extra: Any) -> dict[str, Any]:
    return {"from_task": "2", "from_phase": phase, "by": by, **extra,
            "branches": [{"name": f"s-{s}", "kind": "optimisation", "set": {"args.score": s}}
                         for s in scores]}


def unmarked(steering: list[str]) -> list[str]:
    """The steering log without each line's channel and time (``[via temporal, …]``)."""
    return [line.split(" [via ")[0] for line in steering]


async def update(handle: WorkflowHandle[Any, Any], name: str, arg: Any) -> BranchTree:
    return await handle.execute_update(name, arg,  # pyright: ignore[reportUnknownMemberType]
                                       result_type=BranchTree)


async def until(handle: WorkflowHandle[Any, Any], holds: Callable[[RunProgress], bool],
                what: str) -> None:
    """Until the run's ``progress`` answers so that ``holds``; fail naming ``what``."""
    async def check() -> bool:
        return holds(await handle.query("progress", result_type=RunProgress))
    await wait_for(check, timeout=60, what=what)


async def until_open(handle: WorkflowHandle[Any, Any]) -> None:
    await until(handle, lambda p: p.phase == "open", "the run to be held open")


async def refused(handle: WorkflowHandle[Any, Any], name: str, arg: Any) -> ApplicationError:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await update(handle, name, arg)
    cause = caught.value.cause
    assert isinstance(cause, ApplicationError)
    return cause


async def test_a_sweep_from_a_checkpoint_reuses_upstream_and_keeps_the_best_line(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, **HOLD)
        await until_open(handle)
        tree = await update(handle, "start_branches", sweep(0.2, 0.95, 0.7))
        assert [b.name for b in tree.branches] == ["s-0.2", "s-0.95", "s-0.7"]
        assert all(b.reused == ["1"] for b in tree.branches)
        await update(handle, "steer_run", {"action": "close", "by": "ada"})
        result = await handle.result()
    assert isinstance(result, ResearchResult)
    report = harness.report_of(result)
    # upstream task 1 ran once, in the main line; each branch ran 2 and 3 only
    assert sorted(t for t in harness.sandbox.ran if t.startswith("1")) == ["1"]
    assert sorted(harness.sandbox.ran) == sorted(
        ["1", "2", "3", *(f"{t}.branch-s-{s}" for s in (0.2, 0.95, 0.7) for t in ("2", "3"))])
    assert harness.sandbox.deps_seen["2.branch-s-0.95"] == ["1/out.txt"]
    assert report.branches is not None
    kept = [b.name for b in report.branches.branches if b.selected]
    assert kept == ["s-0.95"], report.branches.model_dump_json(indent=1)
    by_name = {b.name: b for b in report.branches.branches}
    assert by_name["s-0.95"].score.rank == 1 and by_name["s-0.2"].score.rank == 4
    assert report.branches.main[by_name["s-0.2"].group].metric == 0.5
    assert report.branches.kept == {by_name["s-0.2"].group: "s-0.95"}
    second = {t.task_id: t for t in report.tasks}["2"]
    assert second.branch == "s-0.95" and second.metrics["score"] == 0.95
    assert second.status_reason.endswith("(line s-0.95, kept by best)")


async def test_an_update_answers_with_what_it_started_and_the_query_with_the_tree(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, **HOLD)
        await until_open(handle)
        first = await update(handle, "start_branches", sweep(0.2))
        second = await update(handle, "start_branches", sweep(0.9))
        whole = await handle.query("branches", result_type=BranchTree)
        closed = await update(handle, "steer_run", {"action": "close", "by": "ada"})
        await handle.result()
    assert [b.name for b in first.branches] == ["s-0.2"]
    assert [b.name for b in second.branches] == ["s-0.9"]
    assert [b.name for b in whole.branches] == ["s-0.2", "s-0.9"]
    assert closed.branches == [] and unmarked(closed.steering) == ["ada: close"]


async def test_a_person_chooses_a_line_at_the_branch_gate(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, **HOLD, gates={"branch": {"human": True}})
        await until_open(handle)
        await update(handle, "start_branches", sweep(0.2, 0.95, selection="person"))

        await until(handle, lambda p: p.waiting is not None and p.waiting.gate == "branch",
                    "the branch gate")
        await handle.signal("approve", {"gate": "branch", "decision": "approve",
                                        "choice": "nobody", "by": "ada"})
        await handle.signal("approve", {"gate": "branch", "decision": "approve",
                                        "choice": "s-0.2", "by": "ada"})
        await until(handle, lambda p: p.waiting is None, "the gate to settle")
        await update(handle, "steer_run", {"action": "close", "by": "ada"})
        result = await handle.result()
    report = harness.report_of(result)
    assert report.branches is not None
    assert [b.name for b in report.branches.branches if b.selected] == ["s-0.2"]
    assert {t.task_id: t for t in report.tasks}["2"].metrics["score"] == 0.2
    gate = next(g for g in report.gates if g.gate == "branch")
    assert gate.choice == "s-0.2" and gate.by == "ada"
    assert any("no line 'nobody'" in r for r in gate.refused)



async def test_a_sweep_tied_within_intervals_is_a_tie_kept_by_the_simplest_rule(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task("1"), task("2", deps=["1"], score=0.5, ci=0.1), task("3", deps=["2"])]
    async with harness.worker():
        handle = await start(harness, plan, **HOLD)
        await until_open(handle)
        await update(handle, "start_branches", sweep(0.52, 0.55))
        await update(handle, "steer_run", {"action": "close", "by": "ada"})
        result = await handle.result()
    report = harness.report_of(result)
    tree = report.branches
    assert tree is not None
    group = tree.branches[0].group
    # s-0.55 ranks first on its point, but main (0.5) and s-0.52 lie within its interval
    assert tree.tied == {group: ["s-0.55", "s-0.52", "main"]}, tree.model_dump_json(indent=1)
    assert tree.kept == {group: "main"} and not any(b.selected for b in tree.branches)
    assert tree.why[group].startswith("tie on score: s-0.55, s-0.52, main differ within")
    assert "main kept as the simplest line" in tree.why[group]
    assert {t.task_id: t for t in report.tasks}["2"].branch is None


async def test_a_held_out_metric_allowed_by_the_request_is_said_in_why_the_line_was_kept(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, **HOLD)
        await until_open(handle)
        await update(handle, "start_branches", sweep(0.9, metric={"name": "test_score"},
                                                     allow_test_selection=True))
        await update(handle, "steer_run", {"action": "close", "by": "ada"})
        result = await handle.result()
    tree = harness.report_of(result).branches
    assert tree is not None and tree.branches[0].held_out_allowed
    assert tree.why[tree.branches[0].group].endswith(
        "; selected on held-out metric 'test_score', allowed by --allow-test-selection: the "
        "held-out estimate of the kept line is optimistic")


async def test_branch_requests_are_refused_with_every_reason(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request(PLAN, branching={"hold_open": True, "approvers": ["ada", "bo"]})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=task_queue)
        await until_open(handle)
        cases = {
            "unknown task": ({**sweep(0.1), "from_task": "9"}, "unknown task '9'"),
            "unauthorised": (sweep(0.1, by="eve"), "'eve' may not branch"),
            "guardrail": ({**sweep(0.1), "branches": [{"name": "u", "set": {
                "args.url": "http://elsewhere"}}]}, "looks like a host"),
            "main": ({**sweep(0.1), "branches": [{"name": "main"}]}, "run's own line"),
            "outside": ({**sweep(0.1), "branches": [{"name": "o", "set": {"1:args.x": 1}}]},
                        "not 2 or downstream"),
            "verify change": (sweep(0.1, phase="verify"), "execution is reused"),
            "ceiling": ({**sweep(0.1), "branches": [{"name": "c", "set": {
                "resources.memory_mb": 10 ** 6}}]}, "memory_mb"),
            "held out": ({**sweep(0.1), "metric": {"name": "test_r2"}},
                         "metric 'test_r2', which is held out"),
        }
        for what, (request, expected) in cases.items():
            err = await refused(handle, "start_branches", request)
            assert err.type == ErrorType.BRANCH_REFUSED, what
            assert expected in str(err.message), (what, err.message)
        err = await refused(handle, "start_branches", {**sweep(0.1), "from_phase": "later"})
        assert "malformed branch request" in str(err.message)
        err = await refused(handle, "start_branches", {"junk": "x" * 2_000_000})
        tree = await handle.query("branches", result_type=BranchTree)
        assert tree.branches == [] and len(tree.refused) >= 9
        await update(handle, "steer_run", {"action": "close", "by": "bo"})
        result = await handle.result()
    assert result.status == "completed" and result.branches is None


async def test_pause_holds_new_tasks_until_resume(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, gates={"plan": {"human": True}})
        tree = await update(handle, "steer_run", {"action": "pause", "by": "ada"})
        assert tree.paused
        err = await refused(handle, "steer_run", {"action": "pause", "by": "ada"})
        assert err.type == ErrorType.STEER_REFUSED and "already paused" in str(err.message)
        err = await refused(handle, "steer_run", {"action": "close", "by": "ada"})
        assert "not held open" in str(err.message)

        await until(handle, lambda p: p.waiting is not None, "the plan gate")
        await handle.signal("approve", {"gate": "plan", "decision": "approve", "by": "ada"})

        await until(handle, lambda p: p.phase == "execute", "the run to reach its tasks")
        progress = await handle.query("progress", result_type=RunProgress)
        assert set(progress.tasks.values()) == {"pending"}, "nothing starts while paused"
        assert harness.sandbox.ran == []
        tree = await update(handle, "steer_run", {"action": "resume", "by": "bo"})
        assert not tree.paused and unmarked(tree.steering) == ["ada: pause", "bo: resume"]
        result = await handle.result()
    assert result.status == "completed"
    assert sorted(harness.sandbox.ran) == ["1", "2", "3"]


async def test_cancel_ends_every_task_and_still_writes_the_report(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, gates={"step": {"human": True}})

        await until(handle, lambda p: p.tasks.get("1") == "running",
                    "task 1 to wait at its step gate")
        await update(handle, "steer_run", {"action": "cancel", "by": "ada", "comment": "stop"})
        result = await handle.result()
    assert result.status == "cancelled", [(t.task_id, t.status_reason) for t in result.tasks]
    assert result.tasks[0].status_reason.startswith("cancelled while in "), (
        "the task workflow itself ends cancelled, not failed at whatever step it was in")
    assert {t.task_id: t.status for t in result.tasks} == {
        "1": "cancelled", "2": "cancelled", "3": "cancelled"}
    assert harness.report_of(result).tasks, "the report is written"
    assert harness.sandbox.ran == []


async def test_temporal_cancel_winds_the_run_down_and_still_writes_the_report(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, gates={"step": {"human": True}})

        await until(handle, lambda p: p.tasks.get("1") == "running", "task 1 to run")
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as ended:
            await handle.result()
    assert isinstance(ended.value.cause, CancelledError)
    written = harness.reports.last
    assert written is not None and written.report.status == "cancelled"
    assert {t.task_id: t.status for t in written.report.tasks} == {
        "1": "cancelled", "2": "cancelled", "3": "cancelled"}
    assert harness.sandbox.ran == []


async def test_a_person_modifies_the_job_at_the_step_gate_within_the_guardrails(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task("1", score=0.5)], gates={"step": {"human": True}})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=task_queue)
        child = time_env.client.get_workflow_handle(task_workflow_id(req.run_id, "1"))
        await task_gate_waiting(child, "step")
        await handle.signal("approve", {"gate": "step", "task_id": "1", "decision": "modify",
                                        "set": {"args.url": "http://elsewhere"}, "by": "ada"})
        await handle.signal("approve", {"gate": "step", "task_id": "1", "decision": "modify",
                                        "set": {"args.score": 0.4}, "by": "ada"})
        result = await handle.result()
    report = harness.report_of(result)
    first = report.tasks[0]
    assert first.status == "completed" and first.metrics["score"] == 0.4
    assert harness.sandbox.args_seen == [{"behave": "ok", "score": 0.4}]
    gate = first.provenance.approvals[0]
    assert gate.status == "modified" and gate.set == {"args.score": 0.4}
    assert any("looks like a host" in r for r in gate.refused)


async def test_a_failed_job_is_recovered_by_the_policys_branches(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    plan = [task("1"), task("2", deps=["1"], behave="crash"), task("3", deps=["2"])]
    report = await harness.run(plan, max_retries=0, branching={
        "recover": [{"name": "fixed", "set": {"args.behave": "ok"}}]})
    assert report.branches is not None
    [branch] = report.branches.branches
    assert (branch.name, branch.kind, branch.by, branch.from_phase) == (
        "fixed-2", "recovery", "policy", "execute")
    assert branch.selected and branch.reused == ["1"]
    assert {t.task_id: t.status for t in report.tasks} == {
        "1": "completed", "2": "completed", "3": "completed"}
    assert {t.task_id: t.branch for t in report.tasks} == {"1": None, "2": "fixed-2",
                                                           "3": "fixed-2"}


async def test_a_run_linked_to_a_closed_one_runs_only_its_branches(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    closed = await harness.run(PLAN)
    ran_before = list(harness.sandbox.ran)
    req = harness.request(PLAN).model_copy(update={"parent": ParentLink(
        run_id=closed.run_id, reused=closed.tasks,
        request=BranchRequest.model_validate(sweep(0.95, metric={"name": "score"})))})
    async with harness.worker():
        result = await time_env.client.execute_workflow(ResearchWorkflow.run, req,
                                                        id=req.run_id, task_queue=task_queue)
    report = harness.report_of(result)
    assert harness.sandbox.ran[len(ran_before):] == ["2.branch-s-0.95", "3.branch-s-0.95"]
    assert report.parent == closed.run_id and report.branches is not None
    assert [b.name for b in report.branches.branches if b.selected] == ["s-0.95"]
    assert {t.task_id: t.branch for t in report.tasks} == {"1": None, "2": "s-0.95",
                                                           "3": "s-0.95"}


async def test_an_error_gate_answered_with_branches_recovers_the_task(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path,
                      overrides={"diagnose_failure": unsure_reflection(0.6)})
    req = harness.request([task("a", behave="oom_above:32", batch_size=64)],
                          gates={"error": {"human": True}})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=task_queue)
        await task_gate_waiting(
            time_env.client.get_workflow_handle(task_workflow_id(req.run_id, "a")), "error")
        await handle.signal("approve", {"gate": "error", "task_id": "a", "decision": "branch",
                                        "by": "ada", "branches": [
                                            {"name": "small", "kind": "recovery",
                                             "set": {"args.batch_size": 16}}]})
        report = harness.report_of(await handle.result())
    assert report.branches is not None
    [branch] = report.branches.branches
    assert (branch.by, branch.from_phase, branch.selected) == ("ada", "execute", True)
    [only] = report.tasks
    assert only.status == "completed" and only.branch == "small"
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 16]
