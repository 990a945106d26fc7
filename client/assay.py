"""The typed client services use to start, query and await research runs.

It is also where the one data converter lives, so the CLI, workers and tests serialise
pydantic contracts identically. The ``assay`` CLI is a thin shell over this class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from client.batches import batched_progress
from client.runs import MEMO_GOAL_CHARS as MEMO_GOAL_CHARS  # callers import it from here
from client.runs import (
    PendingGate,
    RunSummary,
    TaskLive,
    TaskTally,
    describe_input,
    final_progress,
    finished,
    pending_live,
    start_attributes,
    stop_reason,
    summarize,
    waiting_for_plan,
)
from workflows.branching.selection import plan_problem
from workflows.constants import (
    PHASE_KEY,
    branch_task_workflow_id,
    run_workflow_id,
    task_workflow_id,
)
from workflows.contracts.base import via
from workflows.contracts.environments import BASE
from workflows.contracts.gates import GateDecision, GateRecord
from workflows.contracts.policy import HostPathError as HostPathError
from workflows.contracts.policy import refuse_host_paths as refuse_host_paths
from workflows.contracts.results import (
    ResearchInput,
    ResearchResult,
    RunProgress,
    SuppliedPlan,
    TaskProgress,
)
from workflows.research.workflow import ResearchWorkflow

ResultT = TypeVar("ResultT")

DATA_CONVERTER = pydantic_data_converter
MAX_AGAIN = 1000
TALLY_QUERY_TIMEOUT = timedelta(seconds=5)
"""How long ``assay runs`` waits for a running run's tally (a run whose worker is gone never
answers)."""
STOPPED_QUERY_TIMEOUT = timedelta(seconds=1)
"""The same for a run Temporal stopped: its tally is a last look, not worth a long wait."""
SUPPLY_PLAN = "supply_plan"
"""The update that gives a goal run waiting for a plan its plan; it answers with the progress."""


class RunExistsError(RuntimeError):
    """A run of this exact plan (or goal and data) already exists.

    Workflow IDs come from the plan's content, or from the goal's text and data checksums.
    """

    def __init__(self, run_id: str, status: str) -> None:
        self.existing = f"a run of this plan or goal already exists: {run_id} ({status})"
        """What exists, for a caller to add how to start another (the CLI: ``--again``)."""
        super().__init__(f"{self.existing}; call start_run(..., again=True) to start another "
                         "run of it")
        self.run_id = run_id
        self.status = status
        """How that run stands or ended, as ``assay runs`` shows it (``failed``...)."""


class UnknownEnvironmentError(ValueError):
    """A run names a job environment the workers do not know."""

    def __init__(self, name: str, known: Collection[str]) -> None:
        super().__init__(f"there is no environment named {name!r}; known: "
                         f"{', '.join(sorted(known)) or 'none'}")
        self.name = name
        self.known = sorted(known)


class HeldOutSelectionError(ValueError):
    """A run would compare branches on a held-out metric and its policy does not allow it."""


class RunNotFoundError(LookupError):
    """No run with that ID exists on the server."""


class GateDecisionError(ValueError):
    """A gate decision was refused by the workflow; the message says why."""


class PlanSupplyError(ValueError):
    """A supplied plan was refused (the run is not waiting for one, or the plan is invalid)."""


async def connect(address: str, namespace: str = "default") -> Client:
    """Connect to an unsecured Temporal with Assay's plain data converter.

    Processes configured by settings (TLS, an API key, payload keys) connect through
    ``workers.connection.connect`` instead, which builds on :data:`DATA_CONVERTER`.
    """
    return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER)


class AssayClient:
    """Start, query and await research runs."""

    def __init__(self, client: Client, *, task_queue: str) -> None:
        self.client = client
        self.task_queue = task_queue

    async def start_run(self, req: ResearchInput, *, again: bool = False,
                        environments: Collection[str] | None = None) -> str:
        """Start a run of a resolved plan and return its run ID.

        The ID derives from the plan's name and content, so starting the same plan twice is
        refused with :class:`RunExistsError`; with ``again`` the next free ``-rN`` ID is used.
        With ``environments`` (the named sets the workers know: ``Catalog.names()``), a run
        naming another environment (``policy.environment``) than those or ``base`` is refused
        with :class:`UnknownEnvironmentError` before it starts, a model recording named by
        a host path with :class:`HostPathError`, and a plan comparing branches on a held-out
        metric its policy does not allow with :class:`HeldOutSelectionError`.
        """
        refuse_host_paths(req.policy)
        wanted = req.policy.environment
        if (wanted is not None and wanted != BASE and environments is not None
                and wanted not in environments):
            raise UnknownEnvironmentError(wanted, environments)
        if held := plan_problem(req.plan, req.policy.branching):
            raise HeldOutSelectionError(held)
        memo, summary = describe_input(req)
        for attempt in range(1, MAX_AGAIN + 1):
            run_id = run_workflow_id(req.plan_name, req.plan_sha256, attempt)
            try:
                await self.client.start_workflow(
                    ResearchWorkflow.run, req.model_copy(update={"run_id": run_id}),
                    id=run_id, task_queue=self.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    memo=memo, static_summary=summary,
                    search_attributes=start_attributes(req),
                )
            except WorkflowAlreadyStartedError:
                if not again:
                    existing = await self.describe_run(run_id)
                    raise RunExistsError(run_id, existing.shown_status) from None
                continue
            return run_id
        raise RunExistsError(run_workflow_id(req.plan_name, req.plan_sha256, MAX_AGAIN),
                             "too many re-runs")

    def handle(self, run_id: str, execution: str | None = None,
               ) -> WorkflowHandle[ResearchWorkflow, ResearchResult]:
        """The Temporal handle of a run: its latest execution, or the one named."""
        return self.client.get_workflow_handle_for(ResearchWorkflow.run, run_id,
                                                   run_id=execution or None)

    async def _describe(self, run_id: str) -> WorkflowExecutionDescription:
        try:
            return await self.handle(run_id).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f"no run {run_id!r} on this server") from err
            raise

    async def status(self, run_id: str) -> str:
        """Temporal-level status of a run (``running``, ``completed``, ``failed``, ...)."""
        description = await self._describe(run_id)
        status = description.status or WorkflowExecutionStatus.RUNNING
        return status.name.lower()

    async def progress(self, run_id: str) -> RunProgress:
        """Live phase and task statuses of a run (works on finished runs too).

        A run that completed answers from its result when the result lists every task: a
        query of a run that has ended replays its whole history on a worker (half a second
        for a run of 100 tasks), while its result is one read.
        """
        description = await self._describe(run_id)
        handle = self.handle(run_id)
        if description.status == WorkflowExecutionStatus.COMPLETED:
            result, phase = await handle.result(), description.typed_search_attributes.get(
                PHASE_KEY)
            ended = final_progress(result, phase) or await batched_progress(
                self.client, result, phase)
            if ended is not None:
                return ended
        progress = await handle.query(ResearchWorkflow.progress)
        if progress.batch is not None:  # a large run: its running batch knows its tasks
            progress = await self._with_batch(progress, progress.batch)
        if description.status not in (None, WorkflowExecutionStatus.RUNNING):
            # a run Temporal stopped answers as it last stood: no gate of it waits now
            return progress.model_copy(update={"waiting": None, "approvers": []})
        return progress

    async def _with_batch(self, progress: RunProgress, batch: str) -> RunProgress:
        """``progress`` with how the tasks of its running batch stand (the batch knows)."""
        try:
            now = await self.client.get_workflow_handle(batch).query(
                "progress", result_type=RunProgress)
        except (RPCError, WorkflowQueryFailedError):  # it ended meanwhile: the run knows
            return progress
        return progress.model_copy(update={"tasks": {**progress.tasks, **now.tasks}})

    async def result(self, run_id: str) -> ResearchResult:
        """Wait for a run to finish and return its results."""
        await self.status(run_id)
        return await self.handle(run_id).result()

    async def decide(self, run_id: str, decision: GateDecision) -> GateRecord:
        """Decide a waiting gate of a run (plan gate) or of one of its tasks.

        Raises:
            GateDecisionError: the workflow refused the decision (wrong gate, not allowed,
                nothing waiting), or the run or task has finished; the message says why, who
                may decide and how. A refusal is recorded in the run's events and is final (a
                non-retryable ``GateRefused`` error): sending the same decision again cannot help.
        """
        run = await self.describe_run(run_id)
        if run.status != "running":
            raise GateDecisionError(finished(f"run {run_id}", run))
        return await self.send_update(
            gate_workflow_id(run_id, decision), "decide", decision, GateRecord,
            refused=GateDecisionError, gone=lambda: self._not_open(run_id, decision))

    async def _not_open(self, run_id: str, decision: GateDecision) -> str:
        """Why a run's (or task's) gate cannot take a decision: it finished or never began."""
        if decision.task_id is None:
            return finished(f"run {run_id}", await self.describe_run(run_id))
        task_id = decision.task_id
        inside = f" in branch {decision.branch}" if decision.branch else ""
        try:
            task = await self.client.get_workflow_handle(
                gate_workflow_id(run_id, decision)).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return (f"run {run_id} has no task {task_id!r}{inside} running: it has not "
                    f"started, or the plan has no such task (see `assay status {run_id}`)")
        return finished(f"task {task_id!r}{inside} of run {run_id}", await summarize(task))

    async def supply_plan(self, run_id: str, supplied: SuppliedPlan) -> RunProgress:
        """Give a goal run that waits for a plan the plan to run.

        A plan sent while the run still starts or plans is held until the run waits for
        one, so it may follow :meth:`start_run` at once.

        Raises:
            RunNotFoundError: no such run.
            PlanSupplyError: the run refused the plan (it was started with one, got one from
                its planner or a skill, will end deferred without waiting, has finished, or
                the plan is invalid); the message says why.
        """
        await self.status(run_id)
        return await self.send_update(  # the run holds it while it starts or plans
            run_id, SUPPLY_PLAN, supplied, RunProgress, refused=PlanSupplyError,
            gone=f"run {run_id} has finished; it takes no plan now "
                 "(start a new run with `assay run PLAN.json`)")

    async def send_update(self, workflow_id: str, update: str, arg: Any,
                          result_type: type[ResultT], *, refused: type[ValueError],
                          gone: str | Callable[[], Awaitable[str]]) -> ResultT:
        """Run ``update`` on a workflow; a refusal, or a workflow no longer there, is ``refused``.

        ``gone`` is the message (or what works it out) when the workflow has finished or does
        not exist. A refusal's message is the workflow's own, without its error type.
        """
        handle: WorkflowHandle[Any, Any] = self.client.get_workflow_handle(workflow_id)
        try:
            return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                update, via(arg, "python"), result_type=result_type)
        except WorkflowUpdateFailedError as err:
            cause = err.cause
            raise refused(cause.message if isinstance(cause, ApplicationError)
                          else str(cause or err)) from err
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise refused(gone if isinstance(gone, str) else await gone()) from err
            raise

    async def describe_run(self, run_id: str) -> RunSummary:
        """Temporal's and Assay's status of a run, and its goal.

        For a run Temporal stopped (terminated, timed out...), also why.
        """
        description = await self._describe(run_id)
        summary = await summarize(description)
        if not summary.stopped:
            return summary
        timeout = description.raw_description.execution_config.workflow_execution_timeout
        return replace(summary, stop_reason=await stop_reason(
            self.handle(run_id), timeout.ToTimedelta().total_seconds() or None))

    async def pending_gates(self, limit: int = 200) -> list[PendingGate]:
        """Gates waiting for a person, and goal runs waiting for a plan, across all runs."""
        query = ('ExecutionStatus="Running" AND (AssayPhase="human_gate" OR '
                 'AssayPhase="plan_gate" OR (AssayPhase="plan" AND AssayStatus="waiting"))')
        pending: list[PendingGate] = []
        async for wf in self.client.list_workflows(query, limit=limit):
            handle = self.client.get_workflow_handle(wf.id)
            progress: RunProgress | TaskProgress
            if wf.workflow_type == "TaskWorkflow":
                progress = await handle.query("progress", result_type=TaskProgress)
            else:
                progress = await handle.query("progress", result_type=RunProgress)
            plan_wait = isinstance(progress, RunProgress) and waiting_for_plan(progress)
            if progress.waiting is not None or plan_wait:
                pending.append(PendingGate(run_id=wf.id.split(".task-")[0], workflow_id=wf.id,
                                           gate=progress.waiting,
                                           approvers=tuple(progress.approvers)))
        return pending

    async def task_progress(self, run_id: str, task_id: str) -> TaskProgress:
        """A task's phase, status and the gate it waits at (its workflow must exist)."""
        return await self.client.get_workflow_handle(task_workflow_id(run_id, task_id)).query(
            "progress", result_type=TaskProgress)

    async def task_live(self, run_id: str, task_id: str) -> TaskLive:
        """A running task's phase, its waiting gate, and the activity it waits on.

        The activity's heartbeat, attempt, and last failure while it is retried.
        """
        handle = self.client.get_workflow_handle(task_workflow_id(run_id, task_id))
        progress = await self.task_progress(run_id, task_id)
        pending = (await handle.describe()).raw_description.pending_activities
        for act in pending:
            beat: dict[str, Any] | None = None
            if act.heartbeat_details.payloads:
                decoded = await self.client.data_converter.decode(act.heartbeat_details.payloads)
                if decoded and isinstance(decoded[0], dict):
                    beat = {str(k): v for k, v in decoded[0].items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            return pending_live(task_id, progress, act, beat)
        return TaskLive(task_id, progress.phase, waiting=progress.waiting,
                        approvers=tuple(progress.approvers))

    async def task_counts(self, summary: RunSummary) -> RunSummary:
        """``summary`` with how its tasks stand.

        From the result once the run completed, from its progress while it runs or once
        Temporal stopped it (its open tasks then count as unfinished); unchanged otherwise.
        Of the execution the summary lists, when it names one.
        """
        handle = self.handle(summary.run_id, summary.execution)
        if summary.status == "completed":
            result = await handle.result()
            tally = (TaskTally.of(t.status for t in result.tasks) if result.tasks
                     else TaskTally.of(s for s, n in result.task_counts.items() for _ in range(n)))
        elif summary.status == "running" or summary.stopped:
            try:  # a run whose worker is gone answers no query: listed without its tally
                progress = await handle.query(
                    ResearchWorkflow.progress, rpc_timeout=STOPPED_QUERY_TIMEOUT
                    if summary.stopped else TALLY_QUERY_TIMEOUT)
            except (RPCError, WorkflowQueryFailedError):
                return summary
            statuses = [progress.tasks.get(t, "pending") for t in progress.order]
            tally = TaskTally.stopped(statuses) if summary.stopped else TaskTally.of(statuses)
        else:
            return summary
        return replace(summary, tasks=tally)

    async def list_runs(self, query: str = 'AssayKind="run"', limit: int = 50) -> list[RunSummary]:
        """Runs matching a visibility query, newest first.

        Each execution of a run that was reset (``temporal workflow reset``) is one summary.
        """
        return [await summarize(wf)
                async for wf in self.client.list_workflows(query, limit=limit)]


def gate_workflow_id(run_id: str, decision: GateDecision) -> str:
    """The workflow that decides ``decision``: the run, a task of it, or a task of a branch."""
    if decision.task_id is None:
        return run_id
    if decision.branch:
        return branch_task_workflow_id(run_id, decision.branch, decision.task_id)
    return task_workflow_id(run_id, decision.task_id)
