"""A run's branches: started as child workflows, followed, compared and selected.

``request`` checks a branch request against the run (``workflows.branching.requests``) and
starts each branch as a ``BranchWorkflow`` child (ID ``RUN.branch-NAME``, search attributes
``AssayKind=branch`` and ``AssayParent=RUN``). When a group of siblings has finished,
``settle`` scores every line (the main line's results for the same tasks, and each branch's)
with the comparator and decides by the group's selection: ``best`` makes the first line the
run's, ``keep_all`` keeps the main line, ``person`` opens a ``branch`` gate whose ``choice``
names the line (a timeout follows the gate's policy: approve takes the best, reject the main
line). Lines whose key metric is tied within its intervals are a tie, and the group's tie
rule keeps one of them (``workflows.branching.selection``; a person's rule opens the gate on the
tied lines). The kept line's results replace the run's for those tasks; the others stay in the
tree.
"""

from __future__ import annotations

import asyncio
import contextlib

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.branching.compare import explain, rank, score
    from workflows.branching.requests import BranchRefusedError, Planned, RunView, plan_request
    from workflows.branching.selection import allowed_note, tie_choice, tie_reason, ties
    from workflows.common.bounds import clip
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper
    from workflows.contracts.base import BY_CHARS
    from workflows.contracts.branches import (
        MAIN_LINE,
        BranchRecord,
        BranchRequest,
        BranchTree,
        LineScore,
        SteerRequest,
    )
    from workflows.contracts.executive import REFUSAL_CHARS, REFUSALS_KEPT, GateDecision
    from workflows.contracts.lines import BranchInput, BranchResult
    from workflows.contracts.plan import Decision
    from workflows.contracts.results import TaskResult
    from workflows.research.branch import BranchWorkflow
    from workflows.research.state import RunState

ANSWER_LOG = 20
"""The latest steering and refusal lines an update's answer carries."""
TIES_PATCH = "selection-ties"
"""A group whose lines tie within their intervals keeps one by its tie rule (before: the
ranking's first, or a person choosing among every line)."""


class Branches:
    """The branches of one run.

    Args:
        state: the run's state (plan, order, results; its pause and cancel flags).
        gates: the run's gates (the ``branch`` gate a person chooses at).
        agents: the run's role calls (the budget each branch starts with).
    """

    def __init__(self, state: RunState, gates: GateKeeper, agents: AgentCalls) -> None:
        self.state = state
        self.gates = gates
        self.agents = agents
        self.records: dict[str, BranchRecord] = {}
        self.groups: list[str] = []
        self.decided: set[str] = set()
        self.main: dict[str, LineScore] = {}
        self.kept: dict[str, str] = {}
        self.tied: dict[str, list[str]] = {}
        self.why: dict[str, str] = {}
        self.refused: list[str] = []
        self.steering: list[str] = []
        self.holding = False
        self.closed = False
        self._lines: dict[str, list[TaskResult]] = {}
        self._children: list[asyncio.Task[None]] = []
        self._deciding: str | None = None

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
            if state.plan is None:
                raise BranchRefusedError("the run has no plan yet to branch from")
            view = RunView(run_id=state.req.run_id, plan=state.plan, order=state.order,
                           results=state.results, names=set(self.records),
                           groups=len(self.groups))
            return plan_request(req, view, state.req.policy)
        except BranchRefusedError as err:
            self.refuse(req.by, str(err))
            raise

    def start(self, planned: list[Planned]) -> list[BranchRecord]:
        """Start each planned branch as a child workflow; their records."""
        state = self.state
        for one in planned:
            record = one.record
            record.started_at = workflow.now()
            self.records[record.name] = record
            if record.group not in self.groups:
                self.groups.append(record.group)
            inp = BranchInput(run_id=state.req.run_id, plan_name=state.req.plan_name,
                              plan_sha256=state.req.plan_sha256, record=record, plan=one.plan,
                              order=one.order, reused=one.reused, start=one.start,
                              goal=state.req.goal, data=state.req.data,
                              policy=state.req.policy, queues=state.req.queues,
                              budget=self.agents.budget())
            self._children.append(asyncio.create_task(self._run(inp)))
            state.log.add("handoff", "start", status="branch", agent=clip(record.by, BY_CHARS),
                          inputs={"branch": record.name, "from": f"{record.from_task}:"
                                  f"{record.from_phase}", "group": record.group,
                                  "kind": record.kind},
                          outputs={"changes": [c.model_dump(mode="json")
                                               for c in record.changes],
                                   "reused": record.reused})
        return [one.record for one in planned]

    async def _run(self, inp: BranchInput) -> None:
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
                           inputs={"branch": record.name}, outputs={"reason": result.reason})
        await self.state.log.flush()

    def running(self) -> list[str]:
        """The branches that have not finished."""
        return [n for n, r in self.records.items() if r.status == "running"]

    def explore(self, decision: Decision) -> None:
        """The alternatives a plan writes for a task start with it, as branches."""
        if decision.branches and not self.state.cancelling:
            self.start_quietly(BranchRequest(
                from_task=decision.task_id, branches=decision.branches, by="plan",
                metric=decision.metric))

    def recover(self, result: TaskResult) -> None:
        """Branches a person asked for at an error gate, or the policy's, from a failed job."""
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
        self.start_quietly(BranchRequest(from_task=result.task_id, from_phase="execute",
                                          branches=specs, by=by))

    def start_quietly(self, req: BranchRequest) -> None:
        """Start branches the run itself asks for; a refusal is recorded, never fatal."""
        with contextlib.suppress(BranchRefusedError):
            self.start(self.plan(req))

    # --- deciding ----------------------------------------------------------------------------

    async def settle(self) -> None:
        """Wait for every running branch, then decide each group not yet decided."""
        await workflow.wait_condition(lambda: not self.running())
        await asyncio.gather(*self._children)
        for group in list(self.groups):
            if group not in self.decided:
                self.decided.add(group)
                await self._decide(group)

    async def _decide(self, group: str) -> None:
        state = self.state
        members = [r for r in self.records.values() if r.group == group]
        first = members[0]
        tasks = list(first.tasks)
        declared = sum(len(d.checks) for d in (state.plan.decisions if state.plan else [])
                       if d.task_id in first.tasks)
        lines = {MAIN_LINE: score([state.results[t] for t in tasks if t in state.results],
                                  declared, first.metric)}
        for record in members:
            record.score = score(self._lines.get(record.name, []), declared, first.metric)
            lines[record.name] = record.score
        order = rank(lines, first.metric)
        self.main[group] = lines[MAIN_LINE]
        why = explain(order, lines, first.metric)
        tied = ties(order, lines) if first.metric is not None else []
        if tied and workflow.patched(TIES_PATCH):
            self.tied[group] = tied
            kept = tie_choice(members, tied, lines) or await self._choose(
                first.model_copy(update={"selection": "person"}), tied,
                f"tied within intervals: {why}")
            why = tie_reason(tied, kept, first.ties, first.metric.name if first.metric else "?")
        else:
            kept = await self._choose(first, order, why)
        self.kept[group] = kept
        if first.held_out_allowed:
            why = f"{why}; {allowed_note(first.metric, state.plan.held_out if state.plan else [])}"
        self.why[group] = why
        if kept != MAIN_LINE:
            self.records[kept].selected = True
            how = "a person's choice" if first.selection == "person" else first.selection
            for result in self._lines[kept]:
                state.results[result.task_id] = result.model_copy(update={
                    "status_reason": f"{result.status_reason} (line {kept}, kept by {how})"})
                state.states[result.task_id] = result.status
        state.log.add("checkpoint", "complete", status="selected",
                      inputs={"group": group, "ranking": order},
                      outputs={"kept": kept, "why": why, "selection": first.selection})
        await state.log.flush()

    async def _choose(self, first: BranchRecord, order: list[str], why: str) -> str:
        if first.selection == "keep_all":
            return MAIN_LINE
        if first.selection == "best":
            return order[0]
        listing = "; ".join(f"{i}. {name}" for i, name in enumerate(order, start=1))
        self._deciding = first.group
        try:
            gate = await self.gates.ask("branch", f"keep which line from task "
                                                  f"{first.from_task}:{first.from_phase}? "
                                                  f"{listing} ({why})")
        finally:
            self._deciding = None
        if gate.status == "timed_out":
            return order[0] if self.gates.approved(gate) else MAIN_LINE
        return (gate.choice or order[0]) if gate.status == "approved" else MAIN_LINE

    def check_choice(self, decision: GateDecision) -> str | None:
        """Why a ``branch`` gate decision names no line it can keep (None: it can)."""
        if decision.gate != "branch" or decision.choice is None or self._deciding is None:
            return None
        names = [MAIN_LINE, *(n for n, r in self.records.items() if r.group == self._deciding)]
        if decision.choice not in names:
            return f"no line {decision.choice!r} to keep here (lines: {', '.join(names)})"
        return None

    # --- steering and reading ----------------------------------------------------------------

    async def steer(self, req: SteerRequest) -> None:
        """Pass pause, resume or cancel on to every running branch."""
        if req.action not in ("pause", "resume", "cancel"):
            return
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
