"""TaskWorkflow: one task through the executive phases, as a durable state machine.

intake -> implement -> review -> [approval retry] -> [human gate] -> execute
-> [execution retry] -> verify -> [verification retry] -> finalize

Every move is checked against ``workflows.phases.TRANSITIONS``, recorded as a checkpoint
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
    from workflows.constants import ATTEMPTS_KEY, KIND_KEY, PHASE_KEY, STATUS_KEY, digest
    from workflows.contracts import ExecutionOutcome, TaskStatus, Verification
    from workflows.events import EventLog, upsert_keywords
    from workflows.executive import (
        DiagnoseInput,
        FailureKind,
        GateDecision,
        GateRecord,
        Patch,
        ReflectionNote,
        ReviewVerdict,
        panel_approves,
    )
    from workflows.failures import root_message
    from workflows.gates import GateKeeper, GateRefusedError
    from workflows.phases import Phase, check_transition
    from workflows.plan import JobSpec
    from workflows.regression import regressed_metrics
    from workflows.results import AppliedPatch, Provenance, TaskInput, TaskProgress, TaskResult
    from workflows.task_calls import TaskCalls


class Finish(Exception):  # control flow: the task ends with this status
    """Raised inside the pipeline to end the task with a final status."""

    def __init__(self, status: TaskStatus, reason: str) -> None:
        super().__init__(reason)
        self.status: TaskStatus = status
        self.reason = reason


@workflow.defn
class TaskWorkflow:
    """Reviews, runs, verifies and finalizes one task; a job's failure never fails it."""

    @workflow.init
    def __init__(self, task: TaskInput) -> None:
        self.task = task
        self.calls = TaskCalls(task)
        self.log = EventLog(task.run_id, task.decision.task_id, depth=1)
        self.gates = GateKeeper(task.policy.gates, self.log, task.decision.task_id)
        self.phase = Phase.INTAKE
        self.status: TaskStatus = "pending"
        self.attempts: dict[str, int] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.job: JobSpec | None = task.decision.job
        self.verdicts: list[ReviewVerdict] = []
        self.notes: list[ReflectionNote] = []
        self.outcome: ExecutionOutcome | None = None
        self.verification: Verification | None = None
        self.provenance = Provenance(workflow_id=workflow.info().workflow_id)
        self.patches: list[Patch] = []

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
        self._move(Phase.DONE)
        self.log.add("checkpoint", "complete", status=status,
                     outputs={"status_reason": reason,
                              "artifacts": [a.name for a in result.artifacts]})
        await self.log.flush()
        return result

    async def _pipeline(self) -> None:
        self._move(Phase.IMPLEMENT)
        if self.job is None or self.job.source is None:
            raise Finish("deferred", "no job to run: the plan gives this task no `job`, and no "
                                     "skill or coding agent supplied one; add a `job` to the "
                                     "task or configure a model")
        self.provenance.job_source = self.job.filename or ""
        self.provenance.job_sha256 = digest(self.job.source.encode())
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
            rejection = _rejection(self.verdicts)
            if self.attempts.get(Phase.APPROVAL_RETRY, 0) >= self.task.policy.max_retries:
                raise Finish("failed_retry", f"rejected again after patching: {rejection}")
            self._move(Phase.APPROVAL_RETRY)
            self._bump(Phase.APPROVAL_RETRY)
            note = await self._reflect("rejected")
            patched = await self._recover(note, first_failure=self._first(Phase.APPROVAL_RETRY),
                                          failed=f"did not pass the approval gate: {rejection}",
                                          status_if_none="rejected")
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
            patched = await self._recover(note, first_failure=self._first(Phase.EXECUTION_RETRY),
                                          failed=failed, status_if_none="failed")
            verdicts = self.verdicts = await self._review(patched)
            if not panel_approves(verdicts):
                raise Finish("failed_retry", f"{failed}; the patched job was rejected: "
                                             f"{_rejection(verdicts)}")
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

    # --- steps -----------------------------------------------------------------------------

    async def _review(self, job: JobSpec) -> list[ReviewVerdict]:
        self._bump(Phase.REVIEW)
        await self.log.flush()
        try:
            verdicts = await self.calls.review(job)
        except ActivityError as err:
            raise Finish("failed", f"the review panel could not review the job: "
                                   f"{root_message(err)}") from err
        for v in verdicts:
            self.log.add("agent_call", "complete", agent=v.reviewer, status=v.verdict,
                         outputs={"confidence": v.confidence,
                                  "critical": [f.message for f in v.critical],
                                  "warnings": [f.message for f in v.warnings][:20],
                                  "reasoning": v.reasoning})
        self._snapshot(Phase.REVIEW, {"verdicts": [v.model_dump(mode="json") for v in verdicts]})
        return verdicts

    async def _execute(self, job: JobSpec) -> ExecutionOutcome:
        self._bump(Phase.EXECUTE)
        start_id = self.log.add("code_exec", "start", agent="sandbox",
                                inputs={"filename": job.filename, "args": job.args,
                                        "resources": job.resources.model_dump()})
        await self.log.flush()
        try:
            outcome = await self.calls.execute(job, self.attempts[Phase.EXECUTE])
        except ActivityError as err:
            reason = f"the sandbox could not run the job: {root_message(err)}"
            self.log.add("error", "error", agent="sandbox", status="failed",
                         outputs={"reason": reason})
            raise Finish("failed", reason) from err
        ok = outcome.outcome == "succeeded"
        self.log.add("code_exec", "complete" if ok else "error", agent="sandbox",
                     status=outcome.outcome, duration_ms=int(outcome.duration_s * 1000),
                     outputs={"exit_code": outcome.exit_code, "reason": outcome.reason,
                              "peak_memory_mb": outcome.peak_memory_mb,
                              "stdout_tail": outcome.stdout_tail[-2000:],
                              "stderr_tail": outcome.stderr_tail[-2000:],
                              "isolation": outcome.isolation},
                     meta={"start_event_id": start_id})
        for artifact in outcome.artifacts:
            self.log.add("file_gen", "complete", agent="sandbox", status="created",
                         outputs={"name": artifact.name, "size": artifact.size,
                                  "sha256": artifact.sha256})
        self._snapshot(Phase.EXECUTE, outcome.model_dump(mode="json"))
        return outcome

    async def _verify(self, job: JobSpec, outcome: ExecutionOutcome) -> Verification:
        self._bump(Phase.VERIFY)
        try:
            verification = await self.calls.verify(job, outcome)
        except ActivityError as err:
            raise Finish("failed", f"the evidence could not be checked: "
                                   f"{root_message(err)}") from err
        self.log.add("tool_call", "complete" if verification.passed else "error",
                     agent="verifier", status="pass" if verification.passed else "fail",
                     outputs={"summary": verification.summary, "missing": verification.missing})
        self._snapshot(Phase.VERIFY, verification.model_dump(mode="json"))
        return verification

    async def _reflect(self, kind: FailureKind) -> ReflectionNote | None:
        """A diagnosis from reflection, or None (recorded as a miss) if it is slow or down."""
        assert self.job is not None
        phase = {"rejected": Phase.REVIEW, "execution": Phase.EXECUTE,
                 "verification": Phase.VERIFY}[kind]
        req = DiagnoseInput(
            run_id=self.task.run_id, task_id=self.task.decision.task_id, kind=kind,
            attempt=self.attempts.get(phase, 0), job=self.job, verdicts=self.verdicts,
            outcome=self.outcome if kind != "rejected" else None,
            verification=self.verification if kind == "verification" else None,
            previous_patches=list(self.patches), checks=self.task.decision.checks,
            policy=self.task.policy.review)
        await self.log.flush()
        try:
            note = await self.calls.reflect(req)
        except ActivityError as err:
            self.provenance.reflection_misses += 1
            self.log.add("agent_call", "error", agent="reflector", status="missed",
                         outputs={"reason": root_message(err)})
            return None
        self.notes.append(note)
        self.provenance.reflection_ids.append(note.note_id)
        self.log.add("agent_call", "complete", agent="reflector", status=note.decision,
                     outputs={"note_id": note.note_id, "root_cause": note.root_cause,
                              "likely_fix": note.likely_fix, "confidence": note.confidence,
                              "patch": note.patch.model_dump(mode="json") if note.patch else None,
                              "reason": note.reason})
        return note

    async def _recover(self, note: ReflectionNote | None, *, first_failure: bool, failed: str,
                       status_if_none: TaskStatus) -> JobSpec:
        """The patched job to retry with, or :class:`Finish` with why there is none."""
        if note is None:
            raise Finish(status_if_none, f"{failed}; reflection was unavailable, so no patch "
                                         "was offered")
        diagnosis = f"{failed}; diagnosis: {note.root_cause} ({note.likely_fix}"
        diagnosis += f", confidence {note.confidence:.2f})"
        if note.patch is None or note.patched_job is None:
            status = status_if_none if first_failure else "failed_retry"
            raise Finish(status, f"{diagnosis}; no automatic patch: {note.reason}")
        resolution = await self._resolve(note)
        record = self._record_patch(note.patch, note.decision)
        if resolution == "defer":
            record.outcome = "deferred"
            raise Finish("deferred", f"{diagnosis}; patch {note.patch.patch_id} deferred to the "
                                     f"next cycle: {note.reason or 'confidence too low'}")
        if resolution == "reject":
            record.outcome = "rejected"
            raise Finish("failed", f"{diagnosis}; patch {note.patch.patch_id} was rejected at "
                                   "the error gate")
        record.outcome = "applied"
        self.log.add("tool_call", "complete", agent="reflector", status="patched",
                     outputs={"patch_id": note.patch.patch_id, "sha256": note.patch.sha256,
                              "changes": [c.model_dump(mode="json") for c in note.patch.changes]})
        return note.patched_job

    async def _resolve(self, note: ReflectionNote) -> str:
        """Apply, reject or defer a recovery, by the seed's confidence thresholds and policy."""
        if note.decision in ("retry", "retry_logged"):
            if note.decision == "retry_logged":
                self.log.add("agent_call", "info", agent="reflector", status="retry_logged",
                             outputs={"note_id": note.note_id, "confidence": note.confidence})
            return "apply"
        if note.decision == "human" and self.gates.needs_person("error"):
            gate = await self._human_gate(
                "error", f"{note.root_cause}: apply {note.likely_fix} "
                         f"(confidence {note.confidence:.2f})?", finish_on_reject=False)
            return "apply" if self.gates.approved(gate) else "reject"
        return "defer"

    async def _human_gate(self, kind: Any, question: str, *,
                          finish_on_reject: bool = True) -> GateRecord:
        self._move(Phase.HUMAN_GATE)
        gate = await self.gates.ask(kind, question)
        self.provenance.approvals.append(gate)
        if not self.gates.approved(gate) and finish_on_reject:
            raise Finish("failed" if kind == "result" else "rejected",
                         f"{kind} gate {gate.status} by {gate.by}"
                         + (f": {gate.comment}" if gate.comment else ""))
        if gate.by:
            self.provenance.approval.decided_by.append(f"{kind}:{gate.by}")
        return gate

    def _roll_back_if_regressed(self, previous: tuple[JobSpec, ExecutionOutcome],
                                outcome: ExecutionOutcome) -> None:
        """Undo a retry whose declared metrics regress against the attempt before it."""
        old_job, old_outcome = previous
        regressions = regressed_metrics(old_outcome.metrics, outcome.metrics,
                                        old_job.expected_metrics, self.task.decision.checks,
                                        directional=old_outcome.outcome == "succeeded")
        if not regressions:
            return
        self.job, self.outcome = old_job, old_outcome
        if self.provenance.patches:
            self.provenance.patches[-1].outcome = "rolled_back: " + "; ".join(regressions)
        self.log.add("tool_call", "complete", agent="reflector", status="rolled_back",
                     outputs={"regressions": regressions})
        raise Finish("failed_retry", "the retry regressed "
                                     f"{'; '.join(regressions)}; its patch was rolled back")

    # --- bookkeeping ---------------------------------------------------------------------

    def _record_patch(self, patch: Patch, decision: str) -> AppliedPatch:
        self.patches.append(patch)
        record = AppliedPatch(patch_id=patch.patch_id, phase=self.phase,
                              root_cause=patch.root_cause, changes=patch.changes,
                              risk=patch.risk, confidence=patch.confidence,
                              sha256=patch.sha256, decision=decision)
        self.provenance.patches.append(record)
        return record

    def _completed_reason(self) -> str:
        patched = [p.patch_id for p in self.provenance.patches if p.outcome == "applied"]
        reason = "approved + evidence verified"
        return f"{reason} after patch {', '.join(patched)}" if patched else reason

    def _finalize(self, status: TaskStatus, reason: str) -> TaskResult:
        self._move(Phase.FINALIZE)
        self._set_status(status)
        prov = self.provenance
        prov.execution.attempts = self.attempts.get(Phase.EXECUTE, 0)
        prov.verification.attempts = self.attempts.get(Phase.VERIFY, 0)
        prov.approval.attempts = self.attempts.get(Phase.REVIEW, 0)
        verification = self.verification
        if self.outcome is not None:
            prov.artifacts = [a.name for a in self.outcome.artifacts]
            prov.checksums = {a.name: a.sha256 for a in self.outcome.artifacts}
        decision = self.task.decision
        result = TaskResult(
            task_id=decision.task_id, priority=decision.priority, action=decision.action,
            status=status, status_reason=reason, attempts_total=sum(self.attempts.values()),
            artifacts=verification.artifacts if verification else [],
            metrics=self.outcome.metrics if self.outcome else {},
            checks=verification.checks if verification else [],
            execution=_trimmed(self.outcome),
            verdicts=self.verdicts, reflections=self.notes, provenance=prov)
        self._snapshot(Phase.FINALIZE, {"status": status, "status_reason": reason})
        return result

    def _move(self, nxt: Phase) -> None:
        self.phase = check_transition(self.phase, nxt)
        self.log.add("checkpoint", "info", status=nxt.value,
                     outputs={"attempts": dict(self.attempts)})
        upsert_keywords(**{PHASE_KEY.name: nxt.value})

    def _set_status(self, status: TaskStatus) -> None:
        self.status = status
        upsert_keywords(**{STATUS_KEY.name: status, KIND_KEY.name: "task"})

    def _bump(self, phase: Phase) -> None:
        self.attempts[phase] = self.attempts.get(phase, 0) + 1
        workflow.upsert_search_attributes(  # pyright: ignore[reportUnknownMemberType]
            [ATTEMPTS_KEY.value_set([f"{p}:{n}" for p, n in sorted(self.attempts.items())])])

    def _first(self, retry_phase: Phase) -> bool:
        return self.attempts.get(retry_phase, 0) <= 1

    def _snapshot(self, phase: Phase, state: dict[str, Any]) -> None:
        self.snapshots[phase] = {"at": workflow.now().isoformat(), **state}


RESULT_TAIL_CHARS = 2000
"""Output kept per stream in a task's result (the full bounded tails are in its events)."""


def _trimmed(outcome: ExecutionOutcome | None) -> ExecutionOutcome | None:
    """The outcome with short output tails, so a run's result stays far below payload limits."""
    if outcome is None:
        return None
    return outcome.model_copy(update={"stdout_tail": outcome.stdout_tail[-RESULT_TAIL_CHARS:],
                                      "stderr_tail": outcome.stderr_tail[-RESULT_TAIL_CHARS:]})


def _rejection(verdicts: list[ReviewVerdict]) -> str:
    """Who rejected and why, from the critical findings (field logic, no text matching)."""
    parts = [f"{v.reviewer}: " + "; ".join(
        f"{f.message}" + (f" (line {f.line})" if f.line else "") for f in v.critical)
        if v.critical else f"{v.reviewer}: {v.reasoning}"
        for v in verdicts if v.verdict == "REJECT" or v.critical]
    return " | ".join(parts) or "the panel did not approve"
