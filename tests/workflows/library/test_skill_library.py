"""SkillLibraryWorkflow on a real (time-skipping) Temporal server.

The library's activities are replaced by recorders here (they are tested against PostgreSQL
and Qdrant in tests/activities and end to end in tests/e2e/test_skills_e2e.py): what is under test
is the workflow's own logic — batches of ten, maintenance at 10, 20, 40, repeated and
malformed signals, continue-as-new carrying the state.
"""

from __future__ import annotations

import uuid
from typing import Any

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from workflows.catalogue import EXTRACT_SKILLS, MAINTAIN_SKILLS, RECORD_OUTCOMES
from workflows.contracts.skills import (
    TASK_FINISHED,
    ExtractAnswer,
    ExtractInput,
    LibraryState,
    MaintainAnswer,
    MaintainInput,
    RecordAnswer,
    SkillUse,
    TaskOutcome,
)
from workflows.library.workflow import OUTCOME_MAX_BYTES, SkillLibraryWorkflow


class Recorder:
    def __init__(self) -> None:
        self.extracted: list[list[str]] = []
        self.maintained: list[int] = []
        self.recorded: list[list[str]] = []

    @EXTRACT_SKILLS.defn
    async def extract(self, req: ExtractInput) -> ExtractAnswer:
        self.extracted.append([o.task_id for o in req.outcomes])
        return ExtractAnswer(created=[f"x@v{len(self.extracted)}"])

    @MAINTAIN_SKILLS.defn
    async def maintain(self, req: MaintainInput) -> MaintainAnswer:
        self.maintained.append(req.finished)
        return MaintainAnswer(scored=1)

    @RECORD_OUTCOMES.defn
    async def record(self, outcomes: list[TaskOutcome]) -> RecordAnswer:
        self.recorded.append([o.task_id for o in outcomes])
        assert all(o.job is None for o in outcomes), "uses are recorded without the job"
        return RecordAnswer(recorded=len(outcomes))


def outcome(n: int, *, skill: bool = False) -> TaskOutcome:
    use = SkillUse(skill_id="s@v1", name="s", version=1) if skill else None
    return TaskOutcome(run_id="run", task_id=f"t{n}", action="Describe the table",
                       status="completed", skill=use, job_author="skill:s@v1" if skill else "plan")


async def drained(handle: WorkflowHandle[Any, Any], finished: int, pending: int, *,
                  maintenances: int) -> dict[str, Any]:
    """The library's state once it has handled ``finished`` outcomes (queried, not slept).

    Outcomes still in the inbox already count as finished in the query, so the state is
    only taken once the maintenance those outcomes trigger has been done too. ``handle``
    must follow the latest run: a run that continued as new answers no queries.
    """
    state: dict[str, Any] = {}
    for _ in range(400):
        state = await handle.query(SkillLibraryWorkflow.state)
        if (state["finished"] >= finished and state["pending"] == pending
                and state["maintenances"] == maintenances):
            return state
    raise AssertionError(f"the library did not handle {finished} outcomes: {state}")


async def test_batches_of_ten_are_extracted_and_maintenance_doubles(
        time_env: WorkflowEnvironment) -> None:
    queue = f"skills-{uuid.uuid4().hex[:8]}"
    rec = Recorder()
    async with Worker(time_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record]):
        handle = await time_env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(), id=f"lib-{queue}", task_queue=queue)
        for n in range(25):
            await handle.signal(TASK_FINISHED, outcome(n))
        await handle.signal(TASK_FINISHED, outcome(3))  # a repeat counts once
        await handle.signal(TASK_FINISHED, {"run_id": "r"})  # malformed: refused
        await handle.signal(TASK_FINISHED, outcome(100, skill=True))
        # the skill's use is recorded, not extracted
        state = await drained(handle, 26, 5, maintenances=2)
        await handle.terminate()
    assert state["refused"] == 1
    assert rec.extracted == [[f"t{n}" for n in range(10)], [f"t{n}" for n in range(10, 20)]]
    assert rec.maintained == [10, 20]
    assert rec.recorded == [["t100"]]
    assert state["extractions"] == 2 and state["maintenances"] == 2


async def test_continue_as_new_carries_the_count_and_pending_outcomes(
        dev_env: WorkflowEnvironment) -> None:
    """On the dev server: the time-skipping server may leave a query that reaches a run
    just as it continues as new unanswered."""
    queue = f"skills-{uuid.uuid4().hex[:8]}"
    rec = Recorder()
    async with Worker(dev_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record]):
        handle = await dev_env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(continue_after=4), id=f"lib-{queue}",
            task_queue=queue)
        latest = dev_env.client.get_workflow_handle(f"lib-{queue}")
        for n in range(7):
            await latest.signal(TASK_FINISHED, outcome(n))
        first = await drained(latest, 7, 7, maintenances=0)
        for n in range(7, 14):
            await latest.signal(TASK_FINISHED, outcome(n))
        for n in range(3):  # repeats from before continue-as-new still count once
            await latest.signal(TASK_FINISHED, outcome(n))
        state = await drained(latest, 14, 4, maintenances=1)
        first_run = await dev_env.client.get_workflow_handle(
            f"lib-{queue}", run_id=handle.first_execution_run_id).describe()
        await latest.terminate()
    assert first["finished"] == 7
    assert state["finished"] == 14
    assert rec.extracted == [[f"t{n}" for n in range(10)]]
    assert rec.maintained == [10]
    assert first_run.status == WorkflowExecutionStatus.CONTINUED_AS_NEW


async def test_oversize_outcomes_are_refused_unread_and_the_library_goes_on(
        dev_env: WorkflowEnvironment) -> None:
    """On the dev server, which enforces Temporal's 2 MB payload limit: ten 300 KB outcomes
    kept whole would make the extraction's input too large and wedge the library."""
    queue = f"skills-{uuid.uuid4().hex[:8]}"
    rec = Recorder()
    async with Worker(dev_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=[rec.extract, rec.maintain, rec.record]):
        handle = await dev_env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(), id=f"lib-{queue}", task_queue=queue)
        for n in range(10):
            big = outcome(n).model_copy(update={"action": "x" * (OUTCOME_MAX_BYTES * 5)})
            await handle.signal(TASK_FINISHED, big)
        await handle.signal(TASK_FINISHED, outcome(0).model_copy(update={"run_id": "r" * 5000}))
        for n in range(10, 20):
            await handle.signal(TASK_FINISHED, outcome(n))
        state = await drained(handle, 10, 0, maintenances=1)
        await handle.terminate()
    assert state["refused"] == 11
    assert "run_id has at most 256 characters" in state["last_refused"]
    assert rec.extracted == [[f"t{n}" for n in range(10, 20)]]
