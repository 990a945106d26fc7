"""The typed client services use to start, query and await research runs.

It is also where the one data converter lives, so the CLI, workers and tests serialise
pydantic contracts identically. The ``assay`` CLI is a thin shell over this class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workflows.constants import run_workflow_id, task_workflow_id
from workflows.executive import GateDecision, GateRecord
from workflows.research import ResearchWorkflow
from workflows.results import ResearchInput, ResearchResult, RunProgress, TaskProgress

DATA_CONVERTER = pydantic_data_converter
MAX_AGAIN = 1000


class RunExistsError(RuntimeError):
    """A run of this exact plan already exists (workflow IDs come from the plan's content)."""

    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"a run of this plan already exists: {run_id} ({status}); "
                         "pass --again to start another run of it")
        self.run_id = run_id
        self.status = status


class RunNotFoundError(LookupError):
    """No run with that ID exists on the server."""


class GateDecisionError(ValueError):
    """A gate decision was refused by the workflow; the message says why."""


@dataclass(frozen=True)
class PendingGate:
    """A gate waiting for a person."""

    run_id: str
    workflow_id: str
    gate: GateRecord


@dataclass(frozen=True)
class RunSummary:
    """One line of ``assay runs`` / a run's Temporal-level status."""

    run_id: str
    status: str
    start_time: str


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
        for attempt in range(1, MAX_AGAIN + 1):
            run_id = run_workflow_id(req.plan_name, req.plan_sha256, attempt)
            try:
                await self.client.start_workflow(
                    ResearchWorkflow.run, req.model_copy(update={"run_id": run_id}),
                    id=run_id, task_queue=self.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    memo={"plan": req.plan_name, "tasks": len(req.plan.decisions)},
                    static_summary=f"Assay run of plan {req.plan_name} "
                                   f"({len(req.plan.decisions)} tasks)",
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
                nothing waiting); the message says why.
        """
        await self.status(run_id)
        target_id = (run_id if decision.task_id is None
                     else task_workflow_id(run_id, decision.task_id))
        target: WorkflowHandle[Any, Any] = self.client.get_workflow_handle(target_id)
        try:
            return await target.execute_update(  # pyright: ignore[reportUnknownMemberType]
                "decide", decision, result_type=GateRecord)
        except WorkflowUpdateFailedError as err:
            raise GateDecisionError(str(err.cause or err)) from err
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise GateDecisionError(f"run {run_id} has no task {decision.task_id!r} "
                                        "running") from err
            raise

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
        runs: list[RunSummary] = []
        async for wf in self.client.list_workflows(query, limit=limit):
            runs.append(RunSummary(run_id=wf.id, status=wf.status.name.lower() if wf.status
                                   else "unknown", start_time=wf.start_time.isoformat()))
        return runs
