"""A run's branches: started as child workflows, followed, compared and selected.

``plan`` checks a branch request against the run (``workflows.branching.requests``) and
``start`` starts each branch as a ``BranchWorkflow`` child (ID ``RUN.branch-NAME``, search
attributes ``AssayKind=branch`` and ``AssayParent=RUN``). The branches a plan writes start
with their task, or, while a task they reuse still runs (a sibling of the branch point),
wait for it (``release``). A branch whose handling raises ends ``failed`` with the reason,
so nothing strands the run. When a group of siblings has finished, ``settle`` decides it
(``workflows.research.choosing``): the kept line's results replace the run's for those
tasks; the others stay in the tree. A cancel drops the waiting branches and withdraws the
run's waiting gate. Lines whose key metric is tied within its intervals are a tie, and
the group's tie rule keeps one of them (``workflows.branching.selection``).
"""

from __future__ import annotations

import asyncio
import contextlib

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.branching.requests import (
        BranchRefusedError,
        Planned,
        RunView,
        plan_request,
        unfinished,
    )
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper
    from workflows.contracts.base import BY_CHARS
    from workflows.contracts.branches import (
        BranchRecord,
        BranchRequest,
        BranchTree,
        SteerRequest,
    )
    from workflows.contracts.gates import REFUSAL_CHARS, REFUSALS_KEPT
    from workflows.contracts.lines import BranchInput, BranchResult
    from workflows.contracts.plaintext import clip
    from workflows.contracts.plan import Decision
    from workflows.contracts.results import TaskResult
    from workflows.research.branch import BranchWorkflow
    from workflows.research.checkpoints import Checkpoints
    from workflows.research.choosing import Choosing
    from workflows.research.state import RunState

ANSWER_LOG = 20
"""The latest steering and refusal lines an update's answer carries."""


class Branches(Choosing):
    """The branches of one run.

    Args:
        state: the run's state (plan, order, results; its pause and cancel flags).
        gates: the run's gates (the ``branch`` gate a person chooses at).
        agents: the run's role calls (the budget each branch starts with).
    """

    def __init__(self, state: RunState, gates: GateKeeper, agents: AgentCalls) -> None:
        super().__init__(state, gates)
        self.agents = agents
        self.refused: list[str] = []
        self.steering: list[str] = []
        self.holding = False
        self.closed = False
        self._children: list[asyncio.Task[None]] = []
        self.waiting: list[BranchRequest] = []
        """Branches a plan writes whose reused tasks (the branch point's siblings) still run."""
        self.points = Checkpoints(state)
        """The run's named checkpoints (a request ``from_checkpoint`` reuses their state)."""

    # --- starting ----------------------------------------------------------------------------

    def plan(self, req: BranchRequest) -> list[Planned]:
        """The branches ``req`` asks for, checked against the run now.

        Raises:
            BranchRefusedError: the request is refused (and recorded as such).
        """
        state = self.state
        try:
            if self.closed or state.cancelling:
                raise BranchRefusedError("the run is closing: start a new run from it instead "
                                         "(`assay branch` does so for a closed run)")
            view = self._view()
            if req.from_checkpoint is not None:
                view = self.points.view(req.from_checkpoint, view)
            return plan_request(req, view, state.req.policy)
        except BranchRefusedError as err:
            self.refuse(req.by, str(err))
            raise

    def _view(self) -> RunView:
        state = self.state
        if state.plan is None:
            raise BranchRefusedError("the run has no plan yet to branch from")
        return RunView(run_id=state.req.run_id, plan=state.plan, order=state.order,
                       results=state.results, names=set(self.records), groups=len(self.groups))

    def start(self, planned: list[Planned]) -> list[BranchRecord]:
        """Start each planned branch as a child workflow; their records."""
        state = self.state
        for one in planned:
            record = one.record
            record.started_at = workflow.now()
            self.records[record.name] = record
            if record.group not in self.groups:
                self.groups.append(record.group)
            handed = state.log.open(
                "handoff", "start", status="branch", agent=clip(record.by, BY_CHARS),
                inputs={"branch": record.name, "from": f"{record.from_task}:"
                        f"{record.from_phase}", "group": record.group, "kind": record.kind},
                outputs={"changes": [c.model_dump(mode="json") for c in record.changes],
                         "reused": record.reused})
            inp = BranchInput(run_id=state.req.run_id, plan_name=state.req.plan_name,
                              plan_sha256=state.req.plan_sha256, record=record, plan=one.plan,
                              order=one.order, reused=one.reused, start=one.start,
                              goal=state.req.goal, data=state.req.data,
                              policy=state.req.policy, queues=state.req.queues,
                              budget=self.agents.budget(), parent_event=handed)
            self._children.append(asyncio.create_task(self._run(inp)))
        return [one.record for one in planned]

    async def _run(self, inp: BranchInput) -> None:
        """Run one branch; whatever goes wrong here ends it failed, with the reason."""
        try:
            await self._follow(inp)
        except Exception as err:  # a branch must end with a reason, never strand the run
            record = inp.record
            if record.status == "running":
                record.status = "failed"
                record.reason = clip(f"the run's handling of the branch failed: "
                                     f"{root_message(err)}", 500)
                record.finished_at = workflow.now()
            self.state.log.add("error", "error", status="branch_failed",
                               inputs={"branch": record.name},
                               outputs={"reason": clip(f"{type(err).__name__}: {err}", 500)})

    async def _follow(self, inp: BranchInput) -> None:
        record = inp.record
        try:
            result = await workflow.execute_child_workflow(
                BranchWorkflow.run, inp, id=record.workflow_id,
                task_queue=self.state.req.queues.orchestration,
                static_summary=clip(f"Branch {record.name} from task {record.from_task}:"
                                    f"{record.from_phase}", 200))
        except Exception as err:  # a branch must always end with a status, never hang the run
            result = BranchResult(name=record.name, status="failed",
                                  reason=f"branch workflow ended abnormally: "
                                         f"{root_message(err)}")
        record.status, record.reason = result.status, result.reason
        record.tasks.update({t.task_id: t.status for t in result.tasks})
        record.finished_at = workflow.now()
        self._lines[record.name] = result.tasks
        for task in result.tasks:
            self.agents.charge(task.model)
        self.state.log.add("handoff", "complete", status=result.status,
                           inputs={"branch": record.name}, outputs={"reason": result.reason},
                           under=inp.parent_event)
        await self.state.log.flush()

    def running(self) -> list[str]:
        """The branches that have not finished."""
        return [n for n, r in self.records.items() if r.status == "running"]

    def explore(self, decision: Decision) -> None:
        """The alternatives a plan writes for a task start with it, as branches.

        When a task they reuse still runs (a sibling of the task that a task downstream of it
        depends on), they wait for it: ``release`` starts them once it has finished.
        """
        if decision.branches and not self.state.cancelling:
            self._start_or_wait(BranchRequest(from_task=decision.task_id,
                                              branches=decision.branches, by="plan",
                                              metric=decision.metric))

    def _start_or_wait(self, req: BranchRequest) -> None:
        """Start branches the run itself asks for, or keep them until what they reuse ends."""
        waiting = unfinished(req, self._view())
        if not waiting:
            self.start_quietly(req)
            return
        self.waiting.append(req)
        self.state.log.add("handoff", "info", status="branch_waiting",
                           agent=clip(req.by, BY_CHARS),
                           inputs={"from": req.from_task,
                                   "branches": [b.name for b in req.branches]},
                           outputs={"waiting_for": waiting})

    def release(self) -> None:
        """Start the waiting branches whose reused tasks have all finished.

        A cancelled run starts none: each waiting request is refused, with the reason.
        """
        for req in list(self.waiting):
            if self.state.cancelling:
                self.waiting.remove(req)
                names = ", ".join(b.name for b in req.branches)
                self.refuse(req.by, f"branches {names} from task {req.from_task} never "
                                    "started: the run was cancelled while they waited")
            elif not unfinished(req, self._view()):
                self.waiting.remove(req)
                self.start_quietly(req)

    def finished(self, result: TaskResult) -> None:
        """A task ended: name its checkpoints, start the branches waiting for it, recover."""
        self.points.finished(result)
        self.release()
        self.recover(result)

    def recover(self, result: TaskResult) -> None:
        """Branches a person asked for at an error gate, or the policy's, from a failed job.

        Like a plan's, they wait for the tasks they reuse that still run.
        """
        recover = self.state.req.policy.branching.recover
        failed = (result.status not in ("completed", "cancelled", "blocked")
                  and result.job is not None and result.execution is not None)
        if result.branches_asked:
            by = next((g.by for g in reversed(result.provenance.approvals) if g.by), "person")
            specs = result.branches_asked
        elif recover and failed and not self.state.cancelling:
            by = "policy"
            specs = [s.model_copy(update={"name": f"{s.name}-{result.task_id}"[:48],
                                          "kind": "recovery"}) for s in recover]
        else:
            return
        self._start_or_wait(BranchRequest(from_task=result.task_id, from_phase="execute",
                                          branches=specs, by=by))

    def start_quietly(self, req: BranchRequest) -> None:
        """Start branches the run itself asks for; a refusal is recorded, never fatal."""
        with contextlib.suppress(BranchRefusedError):
            self.start(self.plan(req))

    # --- deciding ----------------------------------------------------------------------------

    async def settle(self) -> None:
        """Wait for every running branch, then decide each group not yet decided."""
        self.release()
        await workflow.wait_condition(lambda: not self.running())
        await asyncio.gather(*self._children)
        for group in list(self.groups):
            if group not in self.decided:
                self.decided.add(group)
                await self._decide(group)

    # --- steering and reading ----------------------------------------------------------------

    async def steer(self, req: SteerRequest) -> None:
        """Pass pause, resume or cancel on to every running branch.

        A cancel also drops the branches still waiting to start and withdraws the run's gate
        that waits for a person (the plan's or a branch choice), so nothing keeps the run.
        """
        if req.action not in ("pause", "resume", "cancel"):
            return
        if req.action == "cancel":
            self.release()
            self.gates.withdraw(f"cancel:{clip(req.by, BY_CHARS)}")
        for name in self.running():
            handle = workflow.get_external_workflow_handle(self.records[name].workflow_id)
            with contextlib.suppress(ApplicationError):  # it ended meanwhile: nothing to steer
                await handle.signal("steer", req)

    def refuse(self, by: str, reason: str) -> None:
        """Keep a refused request's who and why (the latest ones) and record it."""
        line = clip(f"{clip(by, BY_CHARS)}: {reason}", REFUSAL_CHARS)
        self.refused = [*self.refused, line][-REFUSALS_KEPT:]
        self.state.log.add("approval", "error", agent=clip(by, BY_CHARS), status="refused",
                           outputs={"reason": clip(reason, REFUSAL_CHARS)})
        self.state.log.flush_soon(f"refused request: {line}")
        self.state.log.details.set("refused", f"Latest refused request: {line}")

    def answer(self, started: list[BranchRecord]) -> BranchTree:
        """What a ``start_branches`` or ``steer_run`` update answers: what it started.

        The branches the update started and the run's state, not the whole tree (the
        ``branches`` query has it), so a run steered many times does not store the growing
        tree in its history at every update.
        """
        return BranchTree(run_id=self.state.req.run_id, paused=self.state.paused,
                          holding=self.holding, branches=started,
                          refused=self.refused[-ANSWER_LOG:],
                          steering=self.steering[-ANSWER_LOG:])

    def tree(self) -> BranchTree:
        """The run's branch tree as it stands (the ``branches`` query, the report)."""
        return BranchTree(run_id=self.state.req.run_id, paused=self.state.paused,
                          holding=self.holding, branches=list(self.records.values()),
                          main=dict(self.main), kept=dict(self.kept),
                          tied=dict(self.tied), why=dict(self.why),
                          refused=list(self.refused),
                          steering=list(self.steering))
