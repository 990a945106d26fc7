"""A finished task's outcome handed to the learner, off the task's path.

One local activity (``hand_off_outcome``) signals the long-lived ``SkillLibraryWorkflow``
with the outcome and, when the run's memory is on, the part memory learns from; the library
hands that part to memory and learns skills from the rest, while the task goes on to finish.
The signal is accepted before the activity returns, so nothing is lost, and the library drops
a repeat, so nothing counts twice. A hand-off that fails after its retries is a recorded
miss, never the task's failure. What memory learned is therefore not in the task's result:
it is in memory (``assay memory``) moments after the task ends.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import HAND_OFF_OUTCOME
    from workflows.common.failures import root_message
    from workflows.contracts.results import TaskResult
    from workflows.contracts.skills import HandOffInput, SkillReport
    from workflows.task.memory import remember_input
    from workflows.task.skills import task_outcome
    from workflows.task.state import TaskState


def hands_off(state: TaskState) -> bool:
    """Whether the run learns from this task at all (memory or skill outcomes on)."""
    policy = state.task.policy
    return policy.memory.enabled or (policy.skills.enabled and policy.skills.report)


async def hand_off(state: TaskState, result: TaskResult) -> SkillReport:
    """Hand the outcome over; the report the task keeps of it (``reported`` or a miss)."""
    task = state.task
    policy = task.policy
    outcome = task_outcome(state, result).model_copy(update={
        "skills": policy.skills.enabled and policy.skills.report,
        "memory": remember_input(state, result) if policy.memory.enabled else None,
        "memory_queue": task.queues.reflection})
    report = SkillReport(deviation=outcome.deviation, detail=outcome.deviation_detail)
    try:
        await HAND_OFF_OUTCOME.run(
            HandOffInput(outcome=outcome, skills_queue=task.queues.skills),
            summary=f"Task {result.task_id} · hand the outcome to the learner")
    except (ActivityError, ApplicationError) as err:  # learning never fails the task
        report.miss = f"the learner did not take the outcome: {root_message(err)}"
    else:
        report.reported = True
    state.log.add("agent_call", "complete" if report.reported else "error", agent="learner",
                  status="handed_off" if report.reported else "missed",
                  outputs={"deviation": report.deviation, "memory": outcome.memory is not None,
                           "skills": outcome.skills, "miss": report.miss})
    return report
