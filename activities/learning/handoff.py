"""Hand a finished task's outcome to the learner, durably, without waiting for the learning.

The task's workflow calls this local activity as it finishes; the signal is accepted by the
server before the activity returns, so the outcome survives any worker's crash, and the
library drops a repeat (its key is ``run_id/task_id``), so a retried hand-off counts once.
The library is started if it is not running (signal-with-start), so an outcome sent while the
skills pool is down waits in its history for the pool's worker.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.common import WorkflowIDConflictPolicy

from workflows.catalogue import HAND_OFF_OUTCOME
from workflows.contracts.skills import (
    TASK_FINISHED,
    HandOffAnswer,
    HandOffInput,
    LibraryState,
    TaskOutcome,
    library_id,
)
from workflows.library.workflow import OUTCOME_MAX_BYTES, SkillLibraryWorkflow


class Learner:
    """The hand-off, with the settings a library started here begins with."""

    def __init__(self, auto_approve: float) -> None:
        self.auto_approve = auto_approve

    @HAND_OFF_OUTCOME.defn
    async def hand_off_outcome(self, req: HandOffInput) -> HandOffAnswer:
        """Signal the outcome to the library of ``req.skills_queue``, starting it if needed."""
        workflow_id = library_id(req.skills_queue)
        await activity.client().start_workflow(
            SkillLibraryWorkflow.run, LibraryState(auto_approve=self.auto_approve),
            id=workflow_id, task_queue=req.skills_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            start_signal=TASK_FINISHED, start_signal_args=[fitted(req.outcome)])
        return HandOffAnswer(library=workflow_id)


def fitted(outcome: TaskOutcome) -> TaskOutcome:
    """``outcome`` within the size the library reads: the memory part's jobs go first.

    Memory still records the episodes and rules of an outcome without jobs; only a template
    cannot be cached from it.
    """
    cuts = ({"first_job": None}, {"final_job": None})
    for cut in cuts:
        if _size(outcome) <= OUTCOME_MAX_BYTES or outcome.memory is None:
            break
        outcome = outcome.model_copy(update={"memory": outcome.memory.model_copy(update=cut)})
    if _size(outcome) > OUTCOME_MAX_BYTES:
        outcome = outcome.model_copy(update={"job": None})
    return outcome


def _size(outcome: TaskOutcome) -> int:
    return len(outcome.model_dump_json().encode())
