"""How a TaskWorkflow recovers: reflection, patches, error gates, roll-back of regressions.

Every failure asks reflection for a diagnosis (bounded tightly, never blocking); a patch is
applied, sent to a person, deferred or refused by the seed's confidence thresholds.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.common.failures import root_message
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus
    from workflows.contracts.executive import DiagnoseInput, FailureKind, GateRecord, ReflectionNote
    from workflows.contracts.memory import AttemptRecord, RememberAnswer, RememberInput
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import TaskResult
    from workflows.task.phases import Phase
    from workflows.task.regression import regressed_metrics
    from workflows.task.state import Finish, TaskState


class TaskRecovery(TaskState):
    """The recovery steps of the executive pipeline."""

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
            policy=self.task.policy.review, action=self.task.decision.action,
            memory=self.task.policy.memory.enabled)
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
                              "source": note.source, "memory_ref": note.memory_ref,
                              "patterns": [p.key for p in note.patterns],
                              "reason": note.reason})
        return note

    async def _remember(self, result: TaskResult) -> RememberAnswer | None:
        """Hand the finished task to memory (R5-R6); a miss is recorded, never fatal."""
        finished = result.finished_at or workflow.now()
        started = result.started_at or finished
        req = RememberInput(
            run_id=self.task.run_id, task_id=result.task_id, action=self.task.decision.action,
            status=result.status, finished_at=finished, first_job=self.task.decision.job,
            final_job=self.job, failures=self._attempt_records(),
            attempts=self.attempts.get(Phase.EXECUTE, 0) + self.attempts.get(
                Phase.APPROVAL_RETRY, 0),
            metrics=result.metrics, duration_s=(finished - started).total_seconds(),
            environment=self.outcome.environment if self.outcome else "",
            input_names=list(self.task.decision.inputs),
            rules_applied=list(self.provenance.memory_rules),
            template_id=self.provenance.template_id)
        await self.log.flush()
        try:
            learned = await self.calls.remember(req)
        except ActivityError as err:
            self.provenance.reflection_misses += 1
            self.log.add("agent_call", "error", agent="memory", status="missed",
                         outputs={"reason": root_message(err)})
            return None
        self.log.add("agent_call", "complete", agent="memory", status="remembered",
                     outputs=learned.model_dump(mode="json"))
        return learned

    def _attempt_records(self) -> list[AttemptRecord]:
        """Every reflected failure with its patch and what became of the patch."""
        outcomes = {p.patch_id: p.outcome for p in self.provenance.patches}
        records: list[AttemptRecord] = []
        for n, note in enumerate(self.notes, start=1):
            patch = note.patch
            records.append(AttemptRecord(
                phase=note.kind, attempt=n, root_cause=note.root_cause, note_id=note.note_id,
                patch_id=patch.patch_id if patch else "",
                patch_source=note.source if patch else "none",
                changes=list(patch.changes) if patch else [],
                patch_outcome=outcomes.get(patch.patch_id, "offered") if patch else "",
                rule_id=note.memory_ref if note.source == "semantic_rule" else ""))
        return records

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

