"""The typed client services use to start, query and await research runs.

It is also where the one data converter lives, so the CLI, workers and tests serialise
pydantic contracts identically. The ``assay`` CLI is a thin shell over this class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from temporalio.client import (
    Client,
    WorkflowExecution,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workflows.constants import STATUS_KEY, run_workflow_id, task_workflow_id
from workflows.contracts.executive import GateDecision, GateRecord
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
MEMO_GOAL_CHARS = 300
SUPPLY_PLAN = "supply_plan"
"""The update that gives a goal run waiting for a plan its plan; it answers with the progress."""


class RunExistsError(RuntimeError):
    """A run of this exact plan (or goal and data) already exists.

    Workflow IDs come from the plan's content, or from the goal's text and data checksums.
    """

    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"a run of this plan or goal already exists: {run_id} ({status}); "
                         "pass --again to start another run of it")
        self.run_id = run_id
        self.status = status


class RunNotFoundError(LookupError):
    """No run with that ID exists on the server."""


class GateDecisionError(ValueError):
    """A gate decision was refused by the workflow; the message says why."""


class PlanSupplyError(ValueError):
    """A supplied plan was refused (the run is not waiting for one, or the plan is invalid)."""


@dataclass(frozen=True)
class PendingGate:
    """A gate waiting for a person."""

    run_id: str
    workflow_id: str
    gate: GateRecord


@dataclass(frozen=True)
class RunSummary:
    """One line of ``assay runs``: Temporal's status, Assay's own status and the goal."""

    run_id: str
    status: str
    start_time: str
    assay_status: str = ""
    """The run's ``AssayStatus`` (``completed``, ``partial``, ``deferred``, ``waiting``...)."""
    goal: str = ""
    """The start of the goal, for goal runs."""

    @property
    def shown_status(self) -> str:
        """Assay's status while the workflow runs or once it completed; else Temporal's."""
        if self.assay_status and self.status in ("running", "completed"):
            return self.assay_status
        return self.status


async def connect(address: str, namespace: str = "default") -> Client:
    """Connect to Temporal with Assay's data converter."""
    return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER)


class AssayClient:
    """Start, query and await research runs."""

    def __init__(self, client: Client, *, task_queue: str) -> None:
        self.client = client
        self.task_queue = task_queue

    async def start_run(self, req: ResearchInput, *, again: bool = False) -> str:
        """Start a run of a resolved plan and return its run ID.

        The ID derives from the plan's name and content, so starting the same plan twice is
        refused with :class:`RunExistsError`; with ``again`` the next free ``-rN`` ID is used.
        """
        memo, summary = _describe_input(req)
        for attempt in range(1, MAX_AGAIN + 1):
            run_id = run_workflow_id(req.plan_name, req.plan_sha256, attempt)
            try:
                await self.client.start_workflow(
                    ResearchWorkflow.run, req.model_copy(update={"run_id": run_id}),
                    id=run_id, task_queue=self.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    memo=memo, static_summary=summary,
                )
            except WorkflowAlreadyStartedError:
                if not again:
                    raise RunExistsError(run_id, await self.status(run_id)) from None
                continue
            return run_id
        raise RunExistsError(run_workflow_id(req.plan_name, req.plan_sha256, MAX_AGAIN),
                             "too many re-runs")

    def handle(self, run_id: str) -> WorkflowHandle[ResearchWorkflow, ResearchResult]:
        """The Temporal handle of a run."""
        return self.client.get_workflow_handle_for(ResearchWorkflow.run, run_id)

    async def status(self, run_id: str) -> str:
        """Temporal-level status of a run (``running``, ``completed``, ``failed``, ...)."""
        try:
            description = await self.handle(run_id).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f"no run {run_id!r} on this server") from err
            raise
        status = description.status or WorkflowExecutionStatus.RUNNING
        return status.name.lower()

    async def progress(self, run_id: str) -> RunProgress:
        """Live phase and task statuses of a run (works on finished runs too)."""
        await self.status(run_id)
        return await self.handle(run_id).query(ResearchWorkflow.progress)

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
            raise GateDecisionError(_finished(f"run {run_id}", run))
        target_id = (run_id if decision.task_id is None
                     else task_workflow_id(run_id, decision.task_id))
        return await self._update(
            target_id, "decide", decision, GateRecord, refused=GateDecisionError,
            gone=lambda: self._not_open(run_id, decision.task_id))

    async def _not_open(self, run_id: str, task_id: str | None) -> str:
        """Why a run's (or task's) gate cannot take a decision: it finished or never began."""
        if task_id is None:
            return _finished(f"run {run_id}", await self.describe_run(run_id))
        try:
            task = await self.client.get_workflow_handle(
                task_workflow_id(run_id, task_id)).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return (f"run {run_id} has no task {task_id!r} running: it has not started, or "
                    f"the plan has no such task (see `assay status {run_id}`)")
        return _finished(f"task {task_id!r} of run {run_id}", await _summary(task))

    async def supply_plan(self, run_id: str, supplied: SuppliedPlan) -> RunProgress:
        """Give a goal run that waits for a plan the plan to run.

        Raises:
            RunNotFoundError: no such run.
            PlanSupplyError: the run refused the plan (it is not waiting for one, it has
                finished, or the plan is invalid); the message says why.
        """
        await self.status(run_id)
        return await self._update(
            run_id, SUPPLY_PLAN, supplied, RunProgress, refused=PlanSupplyError,
            gone=f"run {run_id} has finished; it takes no plan now "
                 "(start a new run with `assay run PLAN.json`)")

    async def _update(self, workflow_id: str, update: str, arg: Any, result_type: type[ResultT],
                      *, refused: type[ValueError],
                      gone: str | Callable[[], Awaitable[str]]) -> ResultT:
        """Run ``update`` on a workflow; a refusal, or a workflow no longer there, is ``refused``.

        ``gone`` is the message (or what works it out) when the workflow has finished or does
        not exist.
        """
        handle: WorkflowHandle[Any, Any] = self.client.get_workflow_handle(workflow_id)
        try:
            return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                update, arg, result_type=result_type)
        except WorkflowUpdateFailedError as err:
            raise refused(str(err.cause or err)) from err
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise refused(gone if isinstance(gone, str) else await gone()) from err
            raise

    async def describe_run(self, run_id: str) -> RunSummary:
        """Temporal's and Assay's status of a run, and its goal."""
        await self.status(run_id)
        return await _summary(await self.handle(run_id).describe())

    async def pending_gates(self, limit: int = 200) -> list[PendingGate]:
        """Gates waiting for a person, across all runs."""
        query = ('ExecutionStatus="Running" AND '
                 '(AssayPhase="human_gate" OR AssayPhase="plan_gate")')
        pending: list[PendingGate] = []
        async for wf in self.client.list_workflows(query, limit=limit):
            handle = self.client.get_workflow_handle(wf.id)
            query_name = "progress"
            progress: RunProgress | TaskProgress
            if wf.workflow_type == "TaskWorkflow":
                progress = await handle.query(query_name, result_type=TaskProgress)
            else:
                progress = await handle.query(query_name, result_type=RunProgress)
            if progress.waiting is not None:
                run_id = wf.id.split(".task-")[0]
                pending.append(PendingGate(run_id=run_id, workflow_id=wf.id,
                                           gate=progress.waiting))
        return pending

    async def list_runs(self, query: str = 'AssayKind="run"', limit: int = 50) -> list[RunSummary]:
        """Runs matching a visibility query, newest first."""
        return [await _summary(wf)
                async for wf in self.client.list_workflows(query, limit=limit)]


async def _summary(wf: WorkflowExecution) -> RunSummary:
    goal = await wf.memo_value("goal", "")
    return RunSummary(run_id=wf.id, status=wf.status.name.lower() if wf.status else "unknown",
                      start_time=wf.start_time.isoformat(),
                      assay_status=wf.typed_search_attributes.get(STATUS_KEY) or "",
                      goal=goal if isinstance(goal, str) else "")


def _finished(what: str, summary: RunSummary) -> str:
    return (f"{what} has finished ({summary.shown_status}); its gates are closed and take no "
            "decision")


def _describe_input(req: ResearchInput) -> tuple[dict[str, Any], str]:
    """Memo and summary a run is started with (shown by ``assay runs`` and the Web UI)."""
    if req.plan is not None:
        tasks = len(req.plan.decisions)
        return ({"plan": req.plan_name, "tasks": tasks},
                f"Assay run of plan {req.plan_name} ({tasks} tasks)")
    goal = (req.goal or "").strip()
    short = goal if len(goal) <= MEMO_GOAL_CHARS else goal[:MEMO_GOAL_CHARS - 1] + "…"
    first_line = short.splitlines()[0] if short else ""
    return ({"plan": req.plan_name, "goal": short, "data": len(req.data)},
            f"Assay goal run: {first_line[:120]}")
