"""The client's side of branches and steering: start branches, pause, resume, cancel, close.

A run that is still open takes a branch request through its ``start_branches`` update and a
steering request through ``steer_run``; both answer with the run's :class:`BranchTree`. A
closed run can take no child, so a branch from it starts a new run linked to it
(:mod:`client.linking` builds what that run reuses). :class:`SteeringClient` is composed
with :class:`client.assay.AssayClient`, whose connection and refusal handling it uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio.client import WorkflowFailureError
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from client.assay import MEMO_GOAL_CHARS, AssayClient
from client.linking import LinkRefusedError, linked_input, parent_input, reused_tasks
from workflows.constants import PARENT_KEY, PLAN_KEY, branch_workflow_id
from workflows.contracts.base import via
from workflows.contracts.branches import BranchRequest, BranchTree, SteerRequest
from workflows.contracts.checkpoints import Checkpoint, CheckpointList, CheckpointRequest
from workflows.contracts.results import ParentLink, ResearchInput, ResearchResult
from workflows.research.workflow import ResearchWorkflow

START_BRANCHES = "start_branches"
"""The update that starts branches on an open run; it answers with the run's tree."""
STEER_RUN = "steer_run"
"""The update that pauses, resumes, cancels or closes a run; it answers with the tree."""
BRANCHES = "branches"
"""The query that answers with a run's branch tree."""
CHECKPOINT = "checkpoint"
"""The update that names a running run's state; it answers with the checkpoint."""
CHECKPOINTS = "checkpoints"
"""The query that answers with a run's named checkpoints."""
SUMMARY_CHARS = 200
"""The longest summary a linked run shows in the Web UI."""
MAX_LINKED = 1000
"""The most runs linked to one closed run (``RUN.b1`` ... ``RUN.b1000``)."""


class BranchRefusedError(ValueError):
    """A branch request the run (or, for a closed run, the client) will not take; says why."""


class CheckpointRefusedError(ValueError):
    """A checkpoint name the run will not take (taken, malformed, too many, or it ended)."""


class SteerRefusedError(ValueError):
    """A pause, resume, cancel or close the run will not take; the message says why."""


@dataclass(frozen=True)
class BranchesStarted:
    """What a branch request started, and where to follow it."""

    run_id: str
    """The run the branches belong to: the one asked, or the new run linked to it."""
    names: tuple[str, ...]
    workflow_ids: tuple[str, ...]
    """Each branch's workflow, in the order of ``names``."""
    linked_from: str = ""
    """The closed run a new run was started from (empty: the run was open)."""
    tree: BranchTree | None = None
    """The open run's tree after the request (none for a new linked run)."""


class SteeringClient:
    """Branch and steer runs through an :class:`AssayClient`'s connection."""

    def __init__(self, assay: AssayClient) -> None:
        self.assay = assay

    async def branch(self, run_id: str, request: BranchRequest) -> BranchesStarted:
        """Start ``request``'s branches on a run: in it while open, in a new linked run if not.

        Raises:
            RunNotFoundError: no such run.
            BranchRefusedError: the run (or, for a closed run, the client) refused the
                request; the message says why.
        """
        if await self.assay.status(run_id) != "running":
            if request.from_checkpoint is not None:
                raise BranchRefusedError(
                    f"run {run_id} has finished: a branch of a finished run starts from its "
                    "final results in a new linked run; drop the checkpoint (or start from "
                    "one of a running run)")
            return await self.branch_closed(run_id, request)
        tree = await self.start_branches(run_id, request)
        names = tuple(b.name for b in request.branches)
        known = {b.name: b.workflow_id for b in tree.branches}
        return BranchesStarted(run_id, names, tuple(
            known.get(n) or branch_workflow_id(run_id, n) for n in names), tree=tree)

    async def start_branches(self, run_id: str, request: BranchRequest) -> BranchTree:
        """Send ``request`` through an open run's ``start_branches`` update; its tree after.

        Raises:
            BranchRefusedError: the run refused it (a non-retryable ``BranchRefused`` error:
                the same request cannot pass later), or it has finished meanwhile.
        """
        return await self.assay.send_update(
            run_id, START_BRANCHES, request, BranchTree, refused=BranchRefusedError,
            gone=lambda: self._closed(run_id, "branch"))

    async def steer(self, run_id: str, request: SteerRequest) -> BranchTree:
        """Pause, resume, cancel or close a run through its ``steer_run`` update.

        Raises:
            RunNotFoundError: no such run.
            SteerRefusedError: the run refused it (``SteerRefused``: who may steer, or why
                not now), or it has finished.
        """
        if await self.assay.status(run_id) != "running":
            raise SteerRefusedError(await self._closed(run_id, request.action))
        return await self.assay.send_update(
            run_id, STEER_RUN, request, BranchTree, refused=SteerRefusedError,
            gone=lambda: self._closed(run_id, request.action))

    async def branches(self, run_id: str) -> BranchTree:
        """A run's branch tree: its branches, how they compared, who steered it."""
        await self.assay.status(run_id)
        return await self.assay.handle(run_id).query(BRANCHES, result_type=BranchTree)

    async def checkpoint(self, run_id: str, request: CheckpointRequest) -> Checkpoint:
        """Name a running run's state now through its ``checkpoint`` update.

        Raises:
            RunNotFoundError: no such run.
            CheckpointRefusedError: the run refused it (the name is taken or malformed, too
                many were named) or it has finished.
        """
        if await self.assay.status(run_id) != "running":
            raise CheckpointRefusedError(await self._closed(run_id, "checkpoint"))
        return await self.assay.send_update(
            run_id, CHECKPOINT, request, Checkpoint, refused=CheckpointRefusedError,
            gone=lambda: self._closed(run_id, "checkpoint"))

    async def checkpoints(self, run_id: str) -> CheckpointList:
        """A run's named checkpoints, oldest first, and how many automatic ones were dropped."""
        await self.assay.status(run_id)
        return await self.assay.handle(run_id).query(CHECKPOINTS, result_type=CheckpointList)

    async def checkpoint_named(self, run_id: str, name: str) -> Checkpoint:
        """Run ``run_id``'s checkpoint ``name``.

        Raises:
            BranchRefusedError: the run has no checkpoint ``name`` (the known ones said).
        """
        listing = await self.checkpoints(run_id)
        point = next((p for p in listing.checkpoints if p.name == name), None)
        if point is None:
            known = ", ".join(p.name for p in listing.checkpoints[-20:]) or "none yet"
            raise BranchRefusedError(f"run {run_id} has no checkpoint {name!r} (its "
                                     f"checkpoints: {known})")
        return point

    async def from_checkpoint(self, run_id: str, name: str, **fields: Any) -> BranchRequest:
        """A branch request from run ``run_id``'s checkpoint ``name``.

        It starts at the checkpoint's branch point unless ``fields`` give ``from_task`` (and
        ``from_phase``); the other fields are the request's as given.

        Raises:
            BranchRefusedError: the run has no checkpoint ``name`` (the known ones said), or
                it stands for no task and ``fields`` name none.
        """
        point = await self.checkpoint_named(run_id, name)
        start: dict[str, Any] = {"from_task": point.from_task, "from_phase": point.from_phase}
        if "from_task" in fields:
            start = {}
        elif point.from_task is None:
            raise BranchRefusedError(f"checkpoint {name!r} stands for no task (every task had "
                                     "finished, or none was planned): name the task to branch")
        return BranchRequest.model_validate({**start, **fields, "from_checkpoint": name})

    async def branch_closed(self, run_id: str, request: BranchRequest) -> BranchesStarted:
        """Start a new run linked to closed run ``run_id`` that runs only ``request``'s branches.

        The new run, ``RUN.bN`` (the first free N), has the closed run's plan, policy and
        queues (it starts on its orchestration queue), reuses each of its tasks' results
        whole and carries ``AssayParent=RUN``.

        Raises:
            BranchRefusedError: the closed run has no result or plan to branch from, or the
                request names a task it does not have or someone its policy does not allow.
        """
        request = via(request, "python")
        handle = self.assay.handle(run_id)
        try:
            result: ResearchResult = await handle.result()
        except WorkflowFailureError as err:
            raise BranchRefusedError(
                f"run {run_id} ended ({await self.assay.status(run_id)}) without a result; "
                "there is nothing to branch from (start a new run with `assay run`)") from err
        original = await parent_input(self.assay.client, run_id)
        try:
            reused = await reused_tasks(self.assay.client, run_id, result,
                                        result.plan or original.plan)
            req = linked_input(original, result, reused, request)
        except LinkRefusedError as err:
            raise BranchRefusedError(str(err)) from err
        linked = await self._start_linked(run_id, req.model_copy(update={
            "parent": ParentLink(run_id=run_id, reused=reused, request=request)}))
        names = tuple(b.name for b in request.branches)
        return BranchesStarted(linked, names,
                               tuple(branch_workflow_id(linked, n) for n in names),
                               linked_from=run_id)

    async def _start_linked(self, parent: str, req: ResearchInput) -> str:
        """Start ``req`` as ``PARENT.bN``, the first N free; its run ID."""
        branches = ", ".join(b.name for b in req.parent.request.branches) if req.parent else ""
        summary = f"Assay run branched from closed run {parent}: {branches}"
        memo = {"plan": req.plan_name, "parent": parent,
                **({"goal": req.goal[:MEMO_GOAL_CHARS]} if req.goal else {})}
        for n in range(1, MAX_LINKED + 1):
            run_id = f"{parent}.b{n}"
            try:
                await self.assay.client.start_workflow(
                    ResearchWorkflow.run, req.model_copy(update={"run_id": run_id}),
                    id=run_id, task_queue=req.queues.orchestration,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    search_attributes=TypedSearchAttributes([
                        SearchAttributePair(PARENT_KEY, parent),
                        SearchAttributePair(PLAN_KEY, req.plan_name)]),
                    memo=memo, static_summary=summary[:SUMMARY_CHARS],
                )
            except WorkflowAlreadyStartedError:
                continue
            return run_id
        raise BranchRefusedError(f"run {parent} already has {MAX_LINKED} linked runs")

    async def _closed(self, run_id: str, what: str) -> str:
        """Why a run that has finished takes no ``what`` (a branch, or a steering action)."""
        summary = await self.assay.describe_run(run_id)
        if what == "branch":
            return (f"run {run_id} has finished ({summary.shown_status}) meanwhile; ask "
                    "again to start a new run linked to it")
        return f"run {run_id} has finished ({summary.shown_status}); it takes no {what} now"
