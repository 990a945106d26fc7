"""TaskWorkflow: one task through the executive phases, as a durable state machine.

intake -> implement -> review -> [approval retry] -> [human gate] -> execute
-> [execution retry] -> verify -> [verification retry] -> finalize

Every move is checked against ``workflows.task.phases.TRANSITIONS``, recorded as a checkpoint
event and kept in ``snapshots`` (the state a later branch starts from); phase, status and
attempts per phase are queryable and mirrored in search attributes. No code runs until the
review panel approves; no result counts until its evidence is verified; every failure asks
reflection for a diagnosis and takes as many guarded retries as the failure's category allows
(``workflows.task.retrying``) or ``policy.max_retries`` when it is set. With models on, a
task is light or full (``workflows.task.tiering``): a light one asks one model reviewer, and
its first failure reflection cannot patch escalates it to full and runs it again before any
debugger is called.

The class holds the handlers and the phases' loops; each step is a collaborator given the
task's ``TaskState``: ``Coding`` (implement), ``Review``, ``Execution`` (execute, verify),
``Recovery`` (reflection, patches, human gates, roll-back) and ``Debugging``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls
    from workflows.common.changes import ChangeRefusedError
    from workflows.common.gates import GateKeeper, GateRefusedError
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus
    from workflows.contracts.gates import GateDecision, GateRecord
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import TaskInput, TaskProgress, TaskResult
    from workflows.contracts.verdicts import panel_approves
    from workflows.patches import TIERING_PATCH
    from workflows.task.calls import TaskCalls
    from workflows.task.coding import Coding
    from workflows.task.debugging import Debugging
    from workflows.task.execution import Execution
    from workflows.task.learning import hand_off, hands_off
    from workflows.task.phases import Phase
    from workflows.task.recovery import Recovery
    from workflows.task.reflecting import Reflector
    from workflows.task.report import finish
    from workflows.task.review import Review, describe_rejection
    from workflows.task.state import Finish, TaskState
    from workflows.task.tiering import classify


@workflow.defn
class TaskWorkflow:
    """Reviews, runs, verifies and finalizes one task; a job's failure never fails it."""

    @workflow.init
    def __init__(self, task: TaskInput) -> None:
        self.state = state = TaskState(task)
        self.gates = GateKeeper(task.policy.gates, state.log, task.decision.task_id)
        self.agents = AgentCalls(task.policy.agents, task.queues, state.log, task.budget)
        calls = TaskCalls(task)
        self.review = Review(state, calls, self.agents)
        self.execution = Execution(state, calls)
        self.recovery = Recovery(state, self.gates, Reflector(state, self.agents))
        self.coding = Coding(state, self.agents, self.execution)
        self.debugging = Debugging(state, calls, self.agents, self.review, self.execution)

    # --- steering ------------------------------------------------------------------------

    @workflow.signal(name="approve")
    def approve(self, raw: RawValue) -> None:
        """Settle the open gate (``temporal workflow signal --name approve``); refusals are kept.

        The ``GateDecision`` is taken raw, so its size is checked before it is decoded and a
        malformed or undecodable one is refused and recorded, not dropped by the SDK.
        """
        decision = self.gates.parse(raw)
        if decision is None:
            return
        with contextlib.suppress(GateRefusedError):
            self.gates.offer(self._checked(decision))

    @workflow.update(name="decide")
    def decide(self, raw: RawValue) -> GateRecord:
        """Settle the open gate with a ``GateDecision`` and answer with the gate as decided.

        A refusal is recorded like the signal's, then fails the update with a non-retryable
        ``GateRefused`` error that says who may decide and how.
        """
        decision = self.gates.decision_of(raw)
        try:
            decision = self._checked(decision)
        except GateRefusedError as err:
            raise self.gates.refusal(str(err)) from None
        return self.gates.settle(decision)

    @decide.validator
    def _check_decision(self, raw: RawValue) -> None:
        self.gates.check_size(raw)

    def _checked(self, decision: GateDecision) -> GateDecision:
        """``decision``, once a ``modify`` is known to apply to the job within the guardrails.

        Raises:
            GateRefusedError: the changes cannot apply (recorded as refused).
        """
        if decision.decision == "modify" and self.gates.waiting is not None:
            try:
                self.recovery.modified_job(decision.set)
            except ChangeRefusedError as err:
                self.gates.refuse(decision, str(err))
                raise GateRefusedError(str(err)) from None
        return decision

    @workflow.query
    def progress(self) -> TaskProgress:
        """Current phase, status, attempts per phase and the gate waiting, if any."""
        state = self.state
        return TaskProgress(task_id=state.task.decision.task_id, phase=state.phase,
                            status=state.status, attempts=dict(state.attempts),
                            waiting=self.gates.waiting, approvers=self.gates.approvers)

    @workflow.query
    def gates_list(self) -> list[GateRecord]:
        """Every gate of this task, settled or waiting."""
        return list(self.gates.records)

    @workflow.query
    def checkpoint(self, phase: str) -> dict[str, Any]:
        """The state this task had when it left ``phase`` (empty if it never reached it)."""
        return self.state.snapshots.get(phase, {})

    # --- the pipeline --------------------------------------------------------------------

    @workflow.run
    async def run(self, task: TaskInput) -> TaskResult:
        """Take the task from intake to a final status."""
        state = self.state
        started = workflow.now()
        state.set_status("running")
        state.log.open("checkpoint", "start", status="running",
                       inputs={"action": task.decision.action,
                               "priority": task.decision.priority}, holds="root")
        status: TaskStatus = "completed"
        try:
            await self._unless_cancelled()
            reason = state.completed_reason()
        except Finish as end:
            status, reason = end.status, end.reason
        state.provenance.guidelines = list(dict.fromkeys([*task.planned_with,
                                                          *self.agents.guided]))
        result = state.finalize(status, reason, self.agents.spend)
        result.started_at, result.finished_at = started, workflow.now()
        if hands_off(state):
            result.skill_report = await hand_off(state, result)
        artifacts = [a.name for a in result.artifacts]
        result = await finish(state, result)
        state.move(Phase.DONE)
        state.log.add("checkpoint", "complete", status=result.status,
                      outputs={"status_reason": result.status_reason, "artifacts": artifacts},
                      under=state.log.root)
        await state.log.flush()
        return result

    async def _unless_cancelled(self) -> None:
        """The pipeline; a cancelled workflow stops it and ends the task ``cancelled``.

        The pipeline runs shielded, so the cancellation reaches this step, not whichever
        activity call the pipeline waits on (whose step would take it for that call's
        failure); the pipeline is then cancelled and the task finalizes as cancelled.
        """
        pipeline = asyncio.create_task(self._pipeline())
        try:
            await asyncio.shield(pipeline)
        except asyncio.CancelledError:
            phase = self.state.phase
            pipeline.cancel()
            with contextlib.suppress(Finish, ActivityError, asyncio.CancelledError):
                await pipeline
            raise Finish("cancelled", f"cancelled while in {phase}") from None

    async def _pipeline(self) -> None:
        state, start = self.state, self.state.task.start
        if start is not None and start.phase == "verify":
            state.job, state.outcome = start.job, start.outcome
        elif start is not None and start.job is not None:
            self.coding.resume(start.job, start.by)
        else:
            await self.coding.implement()
        if state.outcome is None:
            self._classify()
            await self._review_phase()
            if self.gates.needs_person("step"):
                await self._step_gate()
            await self._execute_phase()
        await self._verify_phase()
        if self.gates.needs_person("result"):
            verification = state.verification
            summary = verification.summary if verification else ""
            await self.recovery.human_gate("result", f"accept the verified result: {summary}")

    async def _step_gate(self) -> None:
        """Ask a person before the job runs; a modified job is reviewed again."""
        state = self.state
        assert state.job is not None
        gate = await self.recovery.human_gate(
            "step", f"run the job {state.job.filename} of task {state.task.decision.task_id}?")
        if gate.status == "modified":
            state.job = self.recovery.modified_job(gate.set)
            state.verdicts = await self.review.panel(state.job)
            if not panel_approves(state.verdicts):
                raise Finish("rejected", f"the job as modified at the step gate was rejected: "
                                         f"{describe_rejection(state.verdicts)}")

    async def _review_phase(self) -> None:
        state = self.state
        assert state.job is not None
        while True:
            state.move(Phase.REVIEW)
            state.verdicts = await self.review.panel(state.job)
            if panel_approves(state.verdicts):
                state.provenance.approval.attempts = state.attempts[Phase.REVIEW]
                state.provenance.approval.decided_by.append("panel:ops+quality_safety+infra")
                return
            rejected = describe_rejection(state.verdicts)
            patched = await self.recovery.retry(
                Phase.APPROVAL_RETRY, "rejected", exhausted=f"rejected again after patching: "
                f"{rejected}", failed=f"did not pass the approval gate: {rejected}",
                status_if_none="rejected")
            if isinstance(patched, Finish):
                if state.branches_asked:
                    raise patched
                patched = await self.coding.rewrite(patched, rejected)
            state.job = patched
            state.provenance.approval.approved_after_patch = True

    async def _execute_phase(self) -> None:
        state = self.state
        assert state.job is not None
        previous: tuple[JobSpec, ExecutionOutcome] | None = None
        while True:
            state.move(Phase.EXECUTE)
            outcome = await self.execution.run(state.job)
            self.recovery.memory.ran(outcome)
            if previous is not None:
                self.recovery.roll_back_if_regressed(previous, outcome)
            state.outcome = outcome
            if outcome.outcome == "succeeded":
                return
            failed = f"approved but execution failed ({outcome.outcome}): {outcome.reason}"
            patched = await self.recovery.retry(
                Phase.EXECUTION_RETRY, "execution", exhausted=f"{failed}; retries exhausted",
                failed=failed, status_if_none="failed")
            if isinstance(patched, Finish):
                if state.branches_asked or not self.debugging.possible():
                    raise patched
                if state.tier == "light" and await self._escalate(failed):
                    continue
                await self.debugging.debug(failed)
                return
            verdicts = state.verdicts = await self.review.panel(patched)
            if not panel_approves(verdicts):
                raise Finish("failed_retry", f"{failed}; the patched job was rejected: "
                                             f"{describe_rejection(verdicts)}")
            previous, state.job = (state.job, outcome), patched

    def _classify(self) -> None:
        """Settle the task's tier once its job is known (models on; else nothing differs)."""
        state = self.state
        if not (self.agents.enabled and workflow.patched(TIERING_PATCH)):
            return
        task = state.task
        tier = classify(task.policy.tiering, task.decision, state.job)
        state.tier = tier.tier
        state.log.add("checkpoint", "info", status=f"tier:{tier.tier}",
                      outputs={"tier": tier.tier, "by": tier.by, "reasons": tier.reasons})

    async def _escalate(self, failed: str) -> bool:
        """A light task's unpatched failure makes it full; whether its job runs once more.

        At its first failed run (and a retry left), the other model reviewers see the job,
        which runs again: the debuggers come only if it fails twice. Later, it goes on to
        the debuggers as a full task.

        Raises:
            Finish: the other model reviewers rejected the job.
        """
        state = self.state
        assert state.job is not None
        again = (state.attempts.get(Phase.EXECUTE, 0) < 2
                 and state.phase == Phase.EXECUTION_RETRY)
        state.tier = "full"
        state.log.add("checkpoint", "info", status="tier:full",
                      outputs={"tier": "full", "by": "escalation", "reasons": [failed],
                               "runs_again": again})
        if not again:
            return False
        verdicts = state.verdicts = await self.review.escalated(state.job)
        if not panel_approves(verdicts):
            raise Finish("failed_retry", f"{failed}; escalated to full, the job was rejected: "
                                         f"{describe_rejection(verdicts)}")
        return True

    async def _verify_phase(self) -> None:
        state = self.state
        assert state.job is not None and state.outcome is not None
        while True:
            state.move(Phase.VERIFY)
            state.verification = await self.execution.verify(state.job, state.outcome)
            if state.verification.passed:
                return
            missing = state.verification.summary
            if state.retries_spent(Phase.VERIFICATION_RETRY, "verification"):
                raise Finish("failed_final", f"evidence missing after "
                                             f"{state.retries_allowed('verification')} retries"
                                             f"{self.recovery.spent('verification')}: {missing}")
            note = await self.recovery.reflect("verification")
            if note is not None and note.root_cause == "acceptance_not_met":
                raise Finish("failed", f"evidence verified but acceptance criteria not met: "
                                       f"{missing}")
            if note is None or note.root_cause != "missing_artifact":
                diagnosis = f" ({note.root_cause}: {note.likely_fix})" if note else ""
                raise Finish("failed_final", f"evidence missing{diagnosis}: {missing}")
            state.move(Phase.VERIFICATION_RETRY)
            state.bump(Phase.VERIFICATION_RETRY)
            if await self.recovery.resolve(note) != "apply":
                raise Finish("failed_final", f"evidence missing: {missing}")
            await self.execution.relink(missing)
