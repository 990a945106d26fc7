"""TaskWorkflow: one task through the executive phases, as a durable state machine.

intake -> implement -> review -> [approval retry] -> [human gate] -> execute
-> [execution retry] -> verify -> [verification retry] -> finalize

Every move is checked against ``workflows.task.phases.TRANSITIONS``, recorded as a checkpoint
event and kept in ``snapshots`` (the state a later branch starts from); phase, status and
attempts per phase are queryable and mirrored in search attributes. No code runs until the
review panel approves; no result counts until its evidence is verified; every failure asks
reflection for a diagnosis and takes at most ``policy.max_retries`` guarded retries.
"""

from __future__ import annotations

import contextlib
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.common.failures import root_message
    from workflows.common.gates import GateRefusedError
    from workflows.constants import digest
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus
    from workflows.contracts.executive import (
        GateDecision,
        GateRecord,
        panel_approves,
    )
    from workflows.contracts.memory import MEMORY_PATCH
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import TaskInput, TaskProgress, TaskResult
    from workflows.library.patterns import SKILLS_PATCH, SkillReport
    from workflows.task.agents import TaskAgents
    from workflows.task.phases import Phase
    from workflows.task.skills import report_outcome, task_outcome
    from workflows.task.state import Finish, describe_rejection


@workflow.defn
class TaskWorkflow(TaskAgents):
    """Reviews, runs, verifies and finalizes one task; a job's failure never fails it."""

    @workflow.init
    def __init__(self, task: TaskInput) -> None:
        super().__init__(task)

    # --- steering ------------------------------------------------------------------------

    @workflow.signal(name="approve")
    def approve(self, payload: Any) -> None:
        """Settle the open gate (``temporal workflow signal --name approve``); refusals are kept.

        The payload is taken as raw JSON so a malformed one is refused and recorded, not
        dropped by the data converter.
        """
        decision = self.gates.parse(payload)
        if decision is None:
            return
        with contextlib.suppress(GateRefusedError):
            self.gates.offer(decision)

    @workflow.update(name="decide")
    def decide(self, decision: GateDecision) -> GateRecord:
        """Settle the open gate and answer with the gate as decided."""
        return self.gates.offer(decision)

    @decide.validator
    def _check_decision(self, decision: GateDecision) -> None:
        self.gates.validate(decision)

    @workflow.query
    def progress(self) -> TaskProgress:
        """Current phase, status, attempts per phase and the gate waiting, if any."""
        return TaskProgress(task_id=self.task.decision.task_id, phase=self.phase,
                            status=self.status, attempts=dict(self.attempts),
                            waiting=self.gates.waiting)

    @workflow.query
    def gates_list(self) -> list[GateRecord]:
        """Every gate of this task, settled or waiting."""
        return list(self.gates.records)

    @workflow.query
    def checkpoint(self, phase: str) -> dict[str, Any]:
        """The state this task had when it left ``phase`` (empty if it never reached it)."""
        return self.snapshots.get(phase, {})

    # --- the pipeline --------------------------------------------------------------------

    @workflow.run
    async def run(self, task: TaskInput) -> TaskResult:
        """Take the task from intake to a final status."""
        started = workflow.now()
        self._set_status("running")
        self.log.add("checkpoint", "start", status="running",
                     inputs={"action": task.decision.action, "priority": task.decision.priority})
        status: TaskStatus = "completed"
        try:
            await self._pipeline()
            reason = self._completed_reason()
        except Finish as end:
            status, reason = end.status, end.reason
        result = self._finalize(status, reason)
        result.started_at, result.finished_at = started, workflow.now()
        if self.task.policy.memory.enabled and workflow.patched(MEMORY_PATCH):
            result.learned = await self._remember(result)
        skills = self.task.policy.skills
        if skills.enabled and skills.report and workflow.patched(SKILLS_PATCH):
            result.skill_report = await self._report_to_library(result)
        self._move(Phase.DONE)
        self.log.add("checkpoint", "complete", status=status,
                     outputs={"status_reason": reason,
                              "artifacts": [a.name for a in result.artifacts]})
        await self.log.flush()
        return result

    async def _report_to_library(self, result: TaskResult) -> SkillReport:
        outcome = task_outcome(self.task, result, self.job, dict(self.attempts))
        report = await report_outcome(outcome, self.task.queues.skills)
        self.log.add("agent_call", "complete" if report.reported else "error", agent="skills",
                     status="reported" if report.reported else "missed",
                     outputs={"deviation": report.deviation, "detail": report.detail,
                              "miss": report.miss})
        return report

    async def _pipeline(self) -> None:
        self._move(Phase.IMPLEMENT)
        if self.task.skill is not None:
            self.provenance.skill = self.task.skill
            self.provenance.job_author = f"skill:{self.task.skill.skill_id}"
        advice = self.task.memory
        if advice is not None:
            self.provenance.memory_rules = [u.rule_id for u in advice.rules]
            if advice.template_id:
                self.provenance.template_id = advice.template_id
                self.provenance.job_author = f"template:{advice.template_id}"
        if self.job is None or self.job.source is None:
            if not self.agents.enabled:
                raise Finish("deferred", "no job to run: the plan gives this task no `job`, "
                                         "and no skill or coding agent supplied one; add a "
                                         "`job` to the task or configure a model")
            self.job = await self._write_job("fast")
        self.provenance.job_source = self.job.filename or ""
        self.provenance.job_sha256 = digest((self.job.source or "").encode())
        await self._review_phase()
        if self.gates.needs_person("step"):
            await self._human_gate("step", f"run the job {self.job.filename} of task "
                                           f"{self.task.decision.task_id}?")
        await self._execute_phase()
        await self._verify_phase()
        if self.gates.needs_person("result"):
            summary = self.verification.summary if self.verification else ""
            await self._human_gate("result", f"accept the verified result: {summary}")

    async def _review_phase(self) -> None:
        assert self.job is not None
        while True:
            self._move(Phase.REVIEW)
            self.verdicts = await self._review(self.job)
            if panel_approves(self.verdicts):
                self.provenance.approval.attempts = self.attempts[Phase.REVIEW]
                self.provenance.approval.decided_by.append("panel:ops+quality_safety+infra")
                return
            rejected = describe_rejection(self.verdicts)
            if self.attempts.get(Phase.APPROVAL_RETRY, 0) >= self.task.policy.max_retries:
                raise Finish("failed_retry", f"rejected again after patching: {rejected}")
            self._move(Phase.APPROVAL_RETRY)
            self._bump(Phase.APPROVAL_RETRY)
            note = await self._reflect("rejected")
            try:
                patched = await self._recover(
                    note, first_failure=self._first(Phase.APPROVAL_RETRY),
                    failed=f"did not pass the approval gate: {rejected}",
                    status_if_none="rejected")
            except Finish as end:
                patched = await self._rewrite(end, rejected)
            self.job = patched
            self.provenance.approval.approved_after_patch = True

    async def _execute_phase(self) -> None:
        assert self.job is not None
        previous: tuple[JobSpec, ExecutionOutcome] | None = None
        while True:
            self._move(Phase.EXECUTE)
            outcome = await self._execute(self.job)
            if previous is not None:
                self._roll_back_if_regressed(previous, outcome)
            self.outcome = outcome
            if outcome.outcome == "succeeded":
                return
            failed = f"approved but execution failed ({outcome.outcome}): {outcome.reason}"
            if self.attempts.get(Phase.EXECUTION_RETRY, 0) >= self.task.policy.max_retries:
                raise Finish("failed_retry", f"{failed}; retries exhausted")
            self._move(Phase.EXECUTION_RETRY)
            self._bump(Phase.EXECUTION_RETRY)
            note = await self._reflect("execution")
            try:
                patched = await self._recover(
                    note, first_failure=self._first(Phase.EXECUTION_RETRY), failed=failed,
                    status_if_none="failed")
            except Finish:
                if not self._can_debug():
                    raise
                await self._debug(failed)
                return
            verdicts = self.verdicts = await self._review(patched)
            if not panel_approves(verdicts):
                raise Finish("failed_retry", f"{failed}; the patched job was rejected: "
                                             f"{describe_rejection(verdicts)}")
            previous, self.job = (self.job, outcome), patched

    async def _verify_phase(self) -> None:
        assert self.job is not None and self.outcome is not None
        while True:
            self._move(Phase.VERIFY)
            self.verification = await self._verify(self.job, self.outcome)
            if self.verification.passed:
                return
            missing = self.verification.summary
            if self.attempts.get(Phase.VERIFICATION_RETRY, 0) >= self.task.policy.max_retries:
                raise Finish("failed_final", f"evidence missing after "
                                             f"{self.task.policy.max_retries} retries: {missing}")
            note = await self._reflect("verification")
            if note is not None and note.root_cause == "acceptance_not_met":
                raise Finish("failed", f"evidence verified but acceptance criteria not met: "
                                       f"{missing}")
            if note is None or note.root_cause != "missing_artifact":
                diagnosis = f" ({note.root_cause}: {note.likely_fix})" if note else ""
                raise Finish("failed_final", f"evidence missing{diagnosis}: {missing}")
            self._move(Phase.VERIFICATION_RETRY)
            self._bump(Phase.VERIFICATION_RETRY)
            if await self._resolve(note) != "apply":
                raise Finish("failed_final", f"evidence missing: {missing}")
            try:
                rescan = await self.calls.rescan(self.job, self.outcome)
            except ActivityError as err:
                raise Finish("failed_final", f"evidence missing ({missing}) and the re-scan "
                                             f"failed: {root_message(err)}") from err
            self.outcome = rescan.outcome
            self.log.add("tool_call", "complete", agent="verifier", status="rescanned",
                         outputs={"relinked": rescan.relinked,
                                  "still_missing": rescan.still_missing})
