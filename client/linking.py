"""What a run started to branch from a closed run takes from it: input, plan and task results.

Temporal cannot add a child to a closed workflow, so ``assay branch`` on a closed run starts a
new run with a :class:`ParentLink`: the closed run's input (from the first event of its
history), the plan that ran, and each task's :class:`TaskResult` as the run kept it (from the
task workflow of the line the run kept for it, a branch's where a branch was kept, or from
the run's result for a task that never had one, such as a blocked task). The request is
checked here first, as the run checks one (``workflows.branching.requests``), so a request
the new run could never take does not start it.
"""

from __future__ import annotations

from typing import TypeVar

from temporalio.client import Client, WorkflowFailureError
from temporalio.service import RPCError, RPCStatusCode

from workflows.branching.requests import BranchRefusedError, RunView, plan_request
from workflows.common.sizes import json_size
from workflows.constants import branch_task_workflow_id, task_workflow_id
from workflows.contracts.branches import MAIN_LINE, BranchRequest, BranchTree
from workflows.contracts.plan import Plan, check_graph
from workflows.contracts.results import (
    ResearchInput,
    ResearchResult,
    TaskOutline,
    TaskResult,
    TaskSummary,
)

InputT = TypeVar("InputT")

LINK_LIMIT = 1_500_000
"""Most bytes of the reused task results a linked run's input may carry (Temporal refuses a
payload over 2 MiB)."""


class LinkRefusedError(ValueError):
    """A branch from a closed run that cannot be started; the message says why."""


async def parent_input(client: Client, run_id: str) -> ResearchInput:
    """The input run ``run_id`` was started with, read from the first event of its history."""
    started = await started_input(client, run_id, ResearchInput)
    if started is None:
        raise LinkRefusedError(f"the history of {run_id} does not start with a run's input")
    return started.with_plan()  # a plan of over 1 000 tasks was sent packed


async def started_input(client: Client, workflow_id: str, kind: type[InputT]) -> InputT | None:
    """The ``kind`` input a workflow's latest execution started with (None: another input)."""
    handle = client.get_workflow_handle(workflow_id)
    async for event in handle.fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        decoded = await client.data_converter.decode(payloads, [kind])
        return decoded[0] if decoded and isinstance(decoded[0], kind) else None
    return None


def linked_input(original: ResearchInput, result: ResearchResult, reused: list[TaskResult],
                 request: BranchRequest) -> ResearchInput:
    """``original`` with the plan that ran, if the closed run's line can take ``request``.

    The request is checked as the run would check it (``workflows.branching.requests``):
    who, which task and checkpoint, which names, which changes.

    Raises:
        LinkRefusedError: the run ran no plan, or the request is refused; every reason.
    """
    plan = result.plan or original.plan
    if plan is None:
        raise LinkRefusedError(f"run {result.run_id} ran no plan; there is no task to branch "
                               "from")
    view = RunView(run_id=result.run_id, plan=plan, order=check_graph(plan),
                   results={t.task_id: t for t in reused})
    try:
        plan_request(request, view, original.policy)
    except BranchRefusedError as err:
        raise LinkRefusedError(str(err)) from err
    return original.model_copy(update={"plan": plan})


async def reused_tasks(client: Client, run_id: str, result: ResearchResult,
                       plan: Plan | None) -> list[TaskResult]:
    """Each task's result in closed run ``run_id`` as the run kept it, in the plan's order.

    A task whose kept line is a branch's reuses that branch's result, not the main line's.

    Raises:
        LinkRefusedError: together they are too large for a run's input.
    """
    summaries = {t.task_id: t for t in result.tasks}
    ids = list(summaries)
    if not ids and plan is not None:  # the run's result had to leave its task list out
        ids = [d.task_id for d in plan.decisions]
    lines = kept_lines(result.branches)
    reused = [await task_result(client, run_id, tid, summaries.get(tid), lines.get(tid))
              for tid in ids]
    size = sum(json_size(t) for t in reused)
    if size > LINK_LIMIT:
        raise LinkRefusedError(
            f"the {len(reused)} task results of run {run_id} make {size:,} bytes, over the "
            f"{LINK_LIMIT:,}-byte limit of a run's input; start a fresh run of the changed "
            "plan instead")
    return reused


def kept_lines(tree: BranchTree | None) -> dict[str, str]:
    """The branch whose line the run kept for each task (a task absent: the main line's).

    Groups are decided in order, and a later group's kept branch replaces an earlier one's;
    a later group that keeps the main line keeps what the main line then was.
    """
    if tree is None:
        return {}
    records = {b.name: b for b in tree.branches}
    lines: dict[str, str] = {}
    for kept in tree.kept.values():
        if kept != MAIN_LINE and kept in records:
            lines.update(dict.fromkeys(records[kept].tasks, kept))
    return lines


async def task_result(client: Client, run_id: str, task_id: str,
                      summary: TaskSummary | None, branch: str | None = None) -> TaskResult:
    """A task's result from its workflow in ``branch``, as the run kept it.

    ``branch`` none is the main line. A task with no workflow result gets its summary in the
    run's result.
    """
    wf_id = (branch_task_workflow_id(run_id, branch, task_id) if branch
             else task_workflow_id(run_id, task_id))
    handle = client.get_workflow_handle(wf_id, result_type=TaskResult)
    try:
        found = await handle.result()
        if branch and summary is not None:  # the reason the run gave: which line, kept how
            found = found.model_copy(update={"status_reason": summary.status_reason})
        return found
    except WorkflowFailureError:
        pass  # it ended abnormally: the run's result says how
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
    if summary is None:
        return TaskResult(task_id=task_id, status="blocked",
                          status_reason=f"run {run_id} has no result of this task")
    return TaskResult.model_validate(summary.model_dump(include=set(TaskOutline.model_fields)))
