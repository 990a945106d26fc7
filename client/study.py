"""The client's side of studies: start one, follow it, decide its cycle gate, plan, stop it.

A study (``StudyWorkflow``) continues as new after every cycle, so its handles are never
bound to one execution: queries, signals and updates reach its latest one, and a query that
lands between two executions is tried again (:data:`QUERY_TRIES`). Its cycles are runs
carrying ``AssayParent = STUDY`` (:meth:`StudyClient.cycles`). :class:`StudyClient` is
composed with :class:`client.assay.AssayClient`, whose refusal handling it uses.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from client.assay import (
    MAX_AGAIN,
    MEMO_GOAL_CHARS,
    SUPPLY_PLAN,
    AssayClient,
    GateDecisionError,
    PlanSupplyError,
    RunExistsError,
    RunNotFoundError,
    refuse_host_paths,
)
from client.linking import started_input
from client.runs import RunSummary, summarize
from workflows.common.canonical import canonical_json
from workflows.constants import KIND_KEY, PARENT_KEY, cycle_run_id, digest, study_workflow_id
from workflows.contracts.base import via
from workflows.contracts.cycles import StudyInput, StudyProgress, StudyResult, StudyStop
from workflows.contracts.gates import GateDecision, GateRecord
from workflows.contracts.results import SuppliedPlan
from workflows.contracts.words import plural
from workflows.study.workflow import StudyWorkflow

STUDY_TYPE = "StudyWorkflow"
QUERY_TRIES = 6
"""How often a query is sent before its error stands (a study between two executions may
not answer for a moment)."""
QUERY_PAUSE_S = 0.5
"""The pause before the second try; it doubles after each."""


class StudyExistsError(RunExistsError):
    """A study of this exact start (goal and data, or plans) already exists."""

    def __init__(self, study_id: str, status: str) -> None:
        super().__init__(study_id, status)
        self.args = (f"a study of this goal or plan already exists: {study_id} ({status}); "
                     "pass --again to start another study of it",)


class StudyRefusedError(ValueError):
    """A stop (or another request) the study cannot take; the message says why."""


class StudyClient:
    """Start, query, steer and await studies."""

    def __init__(self, client: Client, *, task_queue: str) -> None:
        self.client = client
        self.task_queue = task_queue
        self.runs = AssayClient(client, task_queue=task_queue)

    async def start_study(self, inp: StudyInput, *, again: bool = False) -> str:
        """Start a study and return its ID.

        The ID derives from the study's start (its goal and data, or its first plan, and its
        cycle plans), so the same start is refused with :class:`StudyExistsError`; with
        ``again`` the next free ``-rN`` ID is used. ``inp.state.study_id`` is replaced. A model
        recording named by a host path is refused with ``HostPathError``.
        """
        refuse_host_paths(inp.policy)
        name, key = start_key(inp)
        memo, summary = _describe(inp)
        for attempt in range(1, MAX_AGAIN + 1):
            study_id = study_workflow_id(name, key, attempt)
            state = inp.state.model_copy(update={"study_id": study_id})
            try:
                await self.client.start_workflow(
                    StudyWorkflow.run, inp.model_copy(update={"state": state}), id=study_id,
                    task_queue=self.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    memo=memo, static_summary=summary)
            except WorkflowAlreadyStartedError:
                if not again:
                    raise StudyExistsError(study_id, await self.status(study_id)) from None
                continue
            return study_id
        raise StudyExistsError(study_workflow_id(name, key, MAX_AGAIN), "too many re-runs")

    def handle(self, study_id: str) -> WorkflowHandle[StudyWorkflow, StudyResult]:
        """The study's handle: its latest execution, whichever that is."""
        return self.client.get_workflow_handle_for(StudyWorkflow.run, study_id)

    async def status(self, study_id: str) -> str:
        """Temporal-level status of the study's latest execution (``running``, ...).

        Raises:
            RunNotFoundError: no study of that ID (none, or another kind of workflow).
        """
        described = await self._describe(study_id)
        if described.workflow_type != STUDY_TYPE:
            raise RunNotFoundError(f"{study_id!r} is not a study but a {described.workflow_type}"
                                   f" (see `assay status {study_id}` for a run)")
        status = described.status or WorkflowExecutionStatus.RUNNING
        return status.name.lower()

    async def summary(self, study_id: str) -> RunSummary:
        """Temporal's and Assay's status of the study (``AssayStatus``: how it ended)."""
        await self.status(study_id)
        return await summarize(await self._describe(study_id))

    async def is_study(self, workflow_id: str) -> bool:
        """Whether ``workflow_id`` names a study (False: another workflow, or none)."""
        try:
            return (await self._describe(workflow_id)).workflow_type == STUDY_TYPE
        except RunNotFoundError:
            return False

    async def _describe(self, study_id: str) -> Any:
        try:
            return await self.handle(study_id).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f"no study {study_id!r} on this server") from err
            raise

    async def progress(self, study_id: str) -> StudyProgress:
        """The study's phase, cycle, waiting gate and state (finished studies answer too)."""
        await self.status(study_id)
        pause = QUERY_PAUSE_S
        for _ in range(QUERY_TRIES - 1):
            try:
                return await self.handle(study_id).query(StudyWorkflow.progress)
            except RPCError as err:  # between two executions the query may time out
                if err.status == RPCStatusCode.NOT_FOUND:
                    raise
            await asyncio.sleep(pause)
            pause *= 2
        return await self.handle(study_id).query(StudyWorkflow.progress)

    async def started_with(self, study_id: str) -> StudyInput:
        """The input the study's latest execution started with (its policy: who decides)."""
        await self.status(study_id)
        started = await started_input(self.client, study_id, StudyInput)
        if started is None:
            raise RunNotFoundError(f"{study_id!r} is not a study (its history starts otherwise)")
        return started

    async def result(self, study_id: str) -> StudyResult:
        """Wait for the study to end (across its executions) and return how it ended."""
        await self.status(study_id)
        return await self.handle(study_id).result()

    async def decide(self, study_id: str, decision: GateDecision) -> GateRecord:
        """Decide the study's waiting ``cycle`` gate through its ``decide`` update.

        Raises:
            GateDecisionError: the study refused it (who may decide, an unknown choice, no
                gate waiting) or has finished; the message says why.
        """
        if await self.status(study_id) != "running":
            raise GateDecisionError(await self._ended(study_id, "gate decision"))
        return await self.runs.send_update(
            study_id, "decide", decision, GateRecord, refused=GateDecisionError,
            gone=lambda: self._ended(study_id, "gate decision"))

    async def approve(self, study_id: str, decision: GateDecision) -> None:
        """Send ``decision`` as the ``approve`` signal (no answer: a refusal is an event)."""
        await self.status(study_id)
        await self.handle(study_id).signal("approve", via(decision, "python"))

    async def supply_plan(self, study_id: str, supplied: SuppliedPlan) -> StudyProgress:
        """Give the study the plan of its next cycle (before its own plans).

        Raises:
            PlanSupplyError: the study refused the plan (invalid) or has finished.
        """
        if await self.status(study_id) != "running":
            raise PlanSupplyError(await self._ended(study_id, "plan"))
        return await self.runs.send_update(
            study_id, SUPPLY_PLAN, supplied, StudyProgress, refused=PlanSupplyError,
            gone=lambda: self._ended(study_id, "plan"))

    async def stop(self, study_id: str, stop: StudyStop) -> None:
        """Ask the study to end after the cycle that runs (a waiting one ends now).

        Raises:
            StudyRefusedError: the study has finished.
        """
        if await self.status(study_id) != "running":
            raise StudyRefusedError(await self._ended(study_id, "stop"))
        await self.handle(study_id).signal("stop", via(stop, "python"))

    async def cycles(self, study_id: str, limit: int = 200) -> list[RunSummary]:
        """The study's cycle runs as Temporal lists them (``AssayParent="STUDY"``), in order.

        Listing is eventually consistent: a cycle that has just started may be missing.
        """
        query = f'{PARENT_KEY.name}="{_quoted(study_id)}"'
        found = [await summarize(wf) async for wf in self.client.list_workflows(query,
                                                                                limit=limit)]
        return sorted(found, key=lambda s: (cycle_number(study_id, s.run_id), s.run_id))

    async def waiting(self, limit: int = 200) -> list[StudyProgress]:
        """Running studies that wait for a person: at their cycle gate, or for a plan."""
        query = f'{KIND_KEY.name}="study" AND ExecutionStatus="Running"'
        found: list[StudyProgress] = []
        async for wf in self.client.list_workflows(query, limit=limit):
            with contextlib.suppress(RPCError):  # it ended, or moves to its next execution
                progress = await self.progress(wf.id)
                if progress.waiting is not None or progress.needs_plan:
                    found.append(progress)
        return found

    async def _ended(self, study_id: str, what: str) -> str:
        """Why a finished study takes no ``what``."""
        ended = await summarize(await self._describe(study_id))
        return (f"study {study_id} has finished ({ended.shown_status}); it takes no {what} "
                "now (start a new study with `assay study`)")


def start_key(inp: StudyInput) -> tuple[str, str]:
    """The study's name and the digest of its start (what makes two starts the same)."""
    state = inp.state
    name = state.goal or (inp.plans[0].plan_name if inp.plans else state.first_plan) or "study"
    start = {"goal": state.goal, "first_plan": state.first_plan,
             "data": sorted([f.name, f.sha256] for f in inp.data),
             "plans": [p.plan_sha256 for p in inp.plans]}
    return name, digest(canonical_json(start).encode())


def cycle_number(study_id: str, run_id: str) -> int:
    """The cycle ``run_id`` runs for study ``study_id`` (a very large number: none)."""
    number = run_id.removeprefix(cycle_run_id(study_id, 0).removesuffix("0"))
    return int(number) if number.isdigit() and number != run_id else 1 << 30


def _quoted(text: str) -> str:
    """``text`` safe inside a double-quoted visibility-query string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _describe(inp: StudyInput) -> tuple[dict[str, Any], str]:
    """Memo and summary a study is started with (shown in the Web UI)."""
    state = inp.state
    cycles = state.policy.max_cycles
    if state.goal:
        goal = state.goal.strip()
        first = goal.splitlines()[0] if goal else ""
        return ({"goal": goal[:MEMO_GOAL_CHARS], "cycles": cycles, "plans": len(inp.plans)},
                f"Assay study: {first[:120]} (up to {plural(cycles, 'cycle')})")
    plan = inp.plans[0].plan_name if inp.plans else (state.first_plan or "")
    return ({"plan": plan, "cycles": cycles, "plans": len(inp.plans)},
            f"Assay study of plan {plan[:100]} (up to {plural(cycles, 'cycle')})")
