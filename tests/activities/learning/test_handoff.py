"""The hand-off to the learner and the wait for its learning, on the dev server.

The real ``hand_off_outcome`` activity (run with a real client) signals, starting it when
absent, a real ``SkillLibraryWorkflow`` whose activities are recorders: the outcome's memory
part goes to ``remember_task`` once however often the hand-off is retried, an outcome of a run
whose skills are off is not learned as a skill, ``wait_learned`` returns only once the
library has learned (and at once for a task it never took in), and a study's closing cycle
waits for it.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path

from temporalio.testing import ActivityEnvironment, WorkflowEnvironment
from temporalio.worker import Worker

from activities.learning.handoff import Learner, fitted
from activities.learning.settle import wait_learned
from activities.study.cycles import StudyCycles
from tests.activities.study.test_cycles import PLAN, state, written
from tests.workflows.library.test_skill_library import Recorder
from tests.workflows.study.factories import report, result
from workflows.catalogue import REMEMBER_TASK, REMEMBER_TASKS
from workflows.contracts.cycles import CloseCycleInput
from workflows.contracts.memory import (
    RememberAnswer,
    RememberInput,
    RememberTasksAnswer,
    RememberTasksInput,
)
from workflows.contracts.plan import JobSpec
from workflows.contracts.skills import HandOffInput, TaskOutcome, library_id
from workflows.library.workflow import OUTCOME_MAX_BYTES, SkillLibraryWorkflow

close_cycle = StudyCycles().close_cycle  # reports on this host only


class SlowMemory:
    """Records what memory is asked to learn; holds each call until released."""

    def __init__(self) -> None:
        self.remembered: list[str] = []
        self.batches: list[list[str]] = []
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    @REMEMBER_TASK.defn
    async def remember(self, req: RememberInput) -> RememberAnswer:
        self.entered.set()
        await self.release.wait()
        self.remembered.append(f"{req.run_id}/{req.task_id}")
        return RememberAnswer(task_type="t", episodes=1)

    @REMEMBER_TASKS.defn
    async def remember_all(self, req: RememberTasksInput) -> RememberTasksAnswer:
        """The library's batch (patch ``batched-memory``): each task as one by one."""
        self.batches.append([t.task_id for t in req.tasks])
        return RememberTasksAnswer(answers=[await self.remember(t) for t in req.tasks])


def outcome(task_id: str, queue: str, *, skills: bool = True,
            run_id: str = "run-1") -> TaskOutcome:
    memory = RememberInput(run_id=run_id, task_id=task_id, action="describe the table",
                           status="completed", finished_at=datetime(2026, 1, 1, tzinfo=UTC))
    return TaskOutcome(run_id=run_id, task_id=task_id, action="describe the table",
                       status="completed", skills=skills, memory=memory, memory_queue=queue)


async def test_a_retried_hand_off_is_learned_once_and_waited_for(
        dev_env: WorkflowEnvironment) -> None:
    queue = f"learn-{uuid.uuid4().hex[:8]}"
    rec, memory = Recorder(), SlowMemory()
    hand = ActivityEnvironment(client=dev_env.client)
    learner = Learner(auto_approve=1.01)
    async with Worker(dev_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record, memory.remember,
                                  memory.remember_all]):
        answers = [await hand.run(learner.hand_off_outcome,
                                  HandOffInput(outcome=outcome("a", queue), skills_queue=queue))
                   for _ in range(2)]  # the second is a retried attempt of the same hand-off
        assert {a.library for a in answers} == {library_id(queue)}  # started by the first hand-off
        await hand.run(learner.hand_off_outcome,
                       HandOffInput(outcome=outcome("b", queue, skills=False), skills_queue=queue))
        waiting = asyncio.create_task(wait_learned(dev_env.client, queue,
                                                   ["run-1/a", "run-1/b", "run-1/never"]))
        assert await wait_learned(dev_env.client, queue, ["run-1/a"], limit_s=0.3) \
            == ["run-1/a"]  # memory has not answered: not learned yet
        memory.release.set()
        assert await waiting == []
        state = await dev_env.client.get_workflow_handle(library_id(queue)).query(
            SkillLibraryWorkflow.state)
        await dev_env.client.get_workflow_handle(library_id(queue)).terminate()
    assert sorted(memory.remembered) == ["run-1/a", "run-1/b"]  # each once
    assert state["finished"] == 1  # only "a" counts for the skills; "b"'s run had them off
    assert state["last"]["remembered"]["tasks"] >= 1


async def test_outcomes_that_arrive_together_reach_each_memory_in_one_call(
        dev_env: WorkflowEnvironment) -> None:
    """While memory holds the first outcome, three more arrive: the library hands them over
    in one ``remember_tasks`` call per memory queue, in arrival order."""
    queue, other = (f"learn-{uuid.uuid4().hex[:8]}" for _ in range(2))
    rec, memory, elsewhere = Recorder(), SlowMemory(), SlowMemory()
    elsewhere.release.set()
    hand = ActivityEnvironment(client=dev_env.client)
    learner = Learner(auto_approve=1.01)
    async with Worker(dev_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record, memory.remember,
                                  memory.remember_all]), \
            Worker(dev_env.client, task_queue=other,
                   activities=[elsewhere.remember, elsewhere.remember_all]):
        await hand.run(learner.hand_off_outcome,
                       HandOffInput(outcome=outcome("a", queue), skills_queue=queue))
        await memory.entered.wait()
        for task_id, memory_queue in (("b", queue), ("c", other), ("d", queue)):
            await hand.run(learner.hand_off_outcome, HandOffInput(
                outcome=outcome(task_id, memory_queue), skills_queue=queue))
        memory.release.set()
        keys = [f"run-1/{t}" for t in "abcd"]
        assert await wait_learned(dev_env.client, queue, keys) == []
        handle = dev_env.client.get_workflow_handle(library_id(queue))
        history = await handle.fetch_history()
        await handle.terminate()
    assert memory.batches == [["a"], ["b", "d"]] and elsewhere.batches == [["c"]]
    assert memory.remembered == ["run-1/a", "run-1/b", "run-1/d"]
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name
                 for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    assert scheduled.count("remember_tasks") == 3 and "remember_task" not in scheduled


async def test_without_a_library_there_is_nothing_to_wait_for(
        dev_env: WorkflowEnvironment) -> None:
    assert await wait_learned(dev_env.client, f"nobody-{uuid.uuid4().hex[:8]}",
                              ["run/x"], limit_s=5) == []


def test_an_outcome_too_large_for_the_library_loses_its_jobs_first() -> None:
    code = "x = 1\n" * (OUTCOME_MAX_BYTES // 10)
    job = JobSpec(code=code, source=code, filename="job.py")
    big = outcome("a", "q").model_copy(update={"job": job})
    assert big.memory is not None
    big = big.model_copy(update={"memory": big.memory.model_copy(
        update={"first_job": job, "final_job": job})})
    small = fitted(big)
    assert len(small.model_dump_json().encode()) <= OUTCOME_MAX_BYTES
    assert small.memory is not None and small.memory.first_job is None
    assert small.memory.status == "completed"  # the episode itself is kept
    untouched = outcome("b", "q")
    assert fitted(untouched) == untouched


async def test_a_closing_cycle_waits_until_the_learner_has_learned_from_its_tasks(
        dev_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """Memory holds the cycle's task; ``close_cycle`` returns only once memory has it."""
    queue = f"learn-{uuid.uuid4().hex[:8]}"
    rec, memory = Recorder(), SlowMemory()
    env = ActivityEnvironment(client=dev_env.client)
    done = written(tmp_path, report([result("1", metrics={"auc": 0.9})], PLAN,
                                    run_id="cycle-1"))
    async with Worker(dev_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record, memory.remember,
                                  memory.remember_all]):
        await env.run(Learner(auto_approve=1.01).hand_off_outcome, HandOffInput(
            outcome=outcome("1", queue, run_id="cycle-1"), skills_queue=queue))
        await memory.entered.wait()
        learned_when_closed: list[str] = []

        async def close() -> None:
            await env.run(close_cycle, CloseCycleInput(state=state(), result=done,
                                                       skills_queue=queue))
            learned_when_closed.extend(memory.remembered)

        closing = asyncio.create_task(close())
        finished, _ = await asyncio.wait([closing], timeout=2)
        assert not finished  # memory still holds the task: the cycle waits
        memory.release.set()
        await closing
        await dev_env.client.get_workflow_handle(library_id(queue)).terminate()
    assert learned_when_closed == ["cycle-1/1"]
