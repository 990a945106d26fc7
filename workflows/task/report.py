"""A finished task's whole result: written beside its run's report, then cut to fit.

The result a task returns lives on in its run's history, so it is capped
(``workflows.common.sizes``); the file written here keeps what the caps leave out (every
artifact with its checksum, whole output tails, every finding) and the run's report reads it
back. Writing it is advisory: a file that cannot be written is a recorded miss and the task
ends as it would have.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import WRITE_TASK_REPORT
    from workflows.common.failures import root_message
    from workflows.common.sizes import bound_task
    from workflows.contracts.results import TaskResult, WriteTaskReportInput
    from workflows.task.state import TaskState


async def finish(state: TaskState, result: TaskResult) -> TaskResult:
    """Write ``result`` whole, then return it cut to fit (its search attributes follow)."""
    result.detail = await write_detail(state, result)
    bounded = bound_task(result)
    if bounded.status != state.status:
        state.set_status(bounded.status)
    return bounded


async def write_detail(state: TaskState, result: TaskResult) -> str:
    """Write the task's whole result; its path, or empty after a recorded miss."""
    try:
        return await WRITE_TASK_REPORT.run(
            WriteTaskReportInput(run_id=state.task.run_id, result=result))
    except (ActivityError, ApplicationError) as err:  # a local activity's failure can arrive
        # as its own ApplicationError; the task's result still carries what fits
        state.log.add("error", "error", status="detail_unwritten",
                      outputs={"reason": root_message(err)})
        return ""
