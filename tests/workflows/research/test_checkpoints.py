"""Named checkpoints on the time-skipping server: a person's, an error's, an approval's.

A person names the run's state while task 2 waits at its gate; the name is refused when taken,
malformed, hostile or too large; each approved gate and each failure names one by itself; a
branch from the named checkpoint reuses what had finished then and runs to completion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from client.assay import DATA_CONVERTER
from tests.histories.capture.branches import PERIODIC, approve_step
from tests.workflows.common.test_gates import human, plan_gate_waiting, start, task_gate_waiting
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import refused, until, until_open, update
from workflows.constants import task_workflow_id
from workflows.contracts.checkpoints import Checkpoint, CheckpointList
from workflows.contracts.errors import ErrorType
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchResult
from workflows.research.workflow import ResearchWorkflow

PLAN = [task("1"), task("2", deps=["1"], score=0.5), task("3", deps=["2"])]
HOLD: dict[str, Any] = {"hold_open": True, "metric": {"name": "score", "direction": "maximize"}}
STEP = {"step": {"human": True}}


@pytest.fixture
def time_env(own_time_env: WorkflowEnvironment) -> WorkflowEnvironment:
    """A server of each test's own, so a held-open run's children go with it."""
    return own_time_env


async def name(handle: WorkflowHandle[Any, Any], arg: Any) -> Checkpoint:
    return await handle.execute_update("checkpoint", arg,  # pyright: ignore[reportUnknownMemberType]
                                       result_type=Checkpoint)


async def listing(handle: WorkflowHandle[Any, Any]) -> CheckpointList:
    return await handle.query("checkpoints", result_type=CheckpointList)


async def refusals(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """What the run answers to each bad name (taken, malformed, hostile, too long, too large)."""
    said: list[str] = []
    for arg in ({"name": "before-refit", "by": "bo"},
                {"name": "bad name!", "by": "ada"},
                {"name": "\x1b[31mred", "by": "ada"},
                {"name": "error:2:1", "by": "ada"},
                {"name": "n" * 65, "by": "ada"},
                {"name": "big", "by": "ada", "comment": "x" * 9000},
                {"name": "elsewhere", "by": "ada", "task": "nope"},
                {"name": "who", "by": ""}):
        cause = await refused(handle, "checkpoint", arg)
        assert cause.type == ErrorType.CHECKPOINT_REFUSED, cause
        said.append(cause.message)
    return said


async def test_a_named_checkpoint_is_refused_when_bad_and_a_branch_from_it_completes(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, PLAN, branching=HOLD, gates=STEP)
        await approve_step(time_env, run, "1")
        await task_gate_waiting(time_env.client.get_workflow_handle(
            task_workflow_id(run.id, "2")), "step")
        point = await name(run, {"name": "before-refit", "by": "ada", "comment": "refit next"})
        said = await refusals(run)
        for tid in ("2", "3"):
            await approve_step(time_env, run, tid)
        await until_open(run)
        unknown = await refused(run, "start_branches", {
            "from_task": "2", "from_checkpoint": "nowhere", "by": "ada",
            "branches": [{"name": "x"}]})
        tree = await update(run, "start_branches", {
            "from_task": "2", "from_checkpoint": "before-refit", "by": "ada",
            "branches": [{"name": "refit", "set": {"args.score": 0.9}}]})
        for tid in ("2", "3"):
            await approve_step(time_env, run, tid, branch="refit")
        await until(run, lambda p: p.phase == "open", "the run to stay open")
        await update(run, "steer_run", {"action": "close", "by": "ada"})
        result = await run.result()
        points = await listing(run)
    assert isinstance(result, ResearchResult) and result.status == "completed"
    assert (point.name, point.kind, point.by, point.comment) == (
        "before-refit", "manual", "ada", "refit next")
    assert point.tasks == {"1": "completed"} and (point.finished, point.artifacts) == (1, 1)
    assert (point.from_task, point.from_phase, point.run_phase) == ("2", "planned", "execute")
    assert "already taken" in said[0] and "before-refit" in said[0]
    assert all("malformed checkpoint request" in s and "name" in s for s in said[1:5]), said
    assert "over" in said[5] and "8,000" in said[5], said[5]
    assert "unknown task 'nope'" in said[6] and "malformed" in said[7]
    assert "unknown checkpoint 'nowhere'" in unknown.message
    assert "before-refit" in unknown.message and "approval:step:1" in unknown.message
    started = tree.branches[0]
    assert (started.checkpoint, started.reused) == ("before-refit", ["1"])
    assert harness.sandbox.ran.count("1") == 1
    assert sorted(harness.sandbox.ran) == ["1", "2", "2.branch-refit", "3", "3.branch-refit"]
    assert [(p.name, p.kind, p.by) for p in points.checkpoints] == [
        ("approval:step:1", "approval", "ada"), ("before-refit", "manual", "ada"),
        ("approval:step:2", "approval", "ada"), ("approval:step:3", "approval", "ada")]
    assert points.dropped == 0
    report = harness.report_of(result)
    assert report.checkpoints is not None and len(report.checkpoints.checkpoints) == 4
    assert report.branches is not None
    assert [(b.name, b.status) for b in report.branches.branches] == [("refit", "completed")]


async def test_a_failure_names_a_checkpoint_and_old_automatic_ones_are_dropped(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("workflows.research.checkpoints.AUTO_KEPT", 2)
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, [task("a", behave="crash"), task("c", deps=["a"]),
                                    task("d")], gates=STEP)
        await approve_step(time_env, run, "a")
        await until(run, lambda p: p.tasks.get("a") == "failed", "task a to fail")
        await approve_step(time_env, run, "d")
        result = await run.result()
        points = await listing(run)
    assert result.status in ("partial", "failed")
    assert [(p.name, p.kind, p.from_task, p.from_phase) for p in points.checkpoints] == [
        ("error:a:1", "error", "a", "execute"), ("approval:step:d", "approval", "d", "execute")]
    assert points.checkpoints[0].tasks["a"] == "failed"
    assert points.dropped == 1, "approval:step:a, the oldest, was dropped"


async def test_a_person_approving_the_plan_names_a_checkpoint_before_any_task(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, [task("a"), task("b", deps=["a"])], **human("plan"))
        await plan_gate_waiting(run)
        await run.signal("approve", {"gate": "plan", "decision": "approve", "by": "ada"})
        result = await run.result()
        points = await listing(run)
    assert result.status == "completed"
    assert [(p.name, p.kind, p.by, p.from_task, p.tasks) for p in points.checkpoints] == [
        ("approval:plan:run", "approval", "ada", "a", {})]


async def test_every_interval_the_first_task_to_end_names_a_periodic_checkpoint(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, [task("a"), task("b", deps=["a"]), task("c", deps=["b"])],
                          **PERIODIC)
        result = await run.result()
        points = await listing(run)
        history = await run.fetch_history()
    assert result.status == "completed"
    periodic = [(p.name, p.from_task, p.tasks) for p in points.checkpoints
                if p.kind == "periodic"]
    assert periodic == [("periodic:1", "b", {"a": "completed"}),
                        ("periodic:2", "c", {"a": "completed", "b": "completed"}),
                        ("periodic:3", None, {"a": "completed", "b": "completed",
                                              "c": "completed"})]
    assert all(p.by == "assay" and p.comment == "every 50 min" for p in points.checkpoints
               if p.kind == "periodic")
    replayed = await Replayer(workflows=[ResearchWorkflow], data_converter=DATA_CONVERTER
                              ).replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None, replayed.replay_failure


async def test_periodic_checkpoints_keep_their_own_latest_and_are_off_by_default(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("workflows.research.checkpoints.AUTO_KEPT", 1)
    harness = Harness(time_env, task_queue, tmp_path)
    async with harness.worker():
        run = await start(harness, [task("a"), task("b", deps=["a"], behave="crash"),
                                    task("c", deps=["a"])], **PERIODIC)
        await run.result()
        points = await listing(run)
        plain = await start(harness, [task("a")])
        await plain.result()
        none = await listing(plain)
    kinds = sorted((p.kind, p.name) for p in points.checkpoints)
    assert ("error", "error:b:1") in kinds, "a later periodic one does not push it out"
    assert [k for k in kinds if k[0] == "periodic"] == [("periodic", "periodic:2")]
    assert points.dropped >= 1
    assert none.checkpoints == []


@pytest.mark.parametrize("every", [-1, float("nan"), float("inf"), 7 * 24 * 60 + 1, "soon"])
def test_a_periodic_interval_out_of_bounds_is_refused_naming_the_field(every: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        RunPolicy.model_validate({"checkpoint_every_min": every})
    assert "checkpoint_every_min" in str(caught.value)
