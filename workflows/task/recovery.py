"""How a TaskWorkflow recovers: reflection, patches, human gates, roll-back of regressions.

Every failure asks reflection for a diagnosis (bounded tightly, never blocking), and the
reflector role for a failure the rule table cannot name (``reflecting``); a patch is
applied, sent to a person, deferred or refused by its confidence thresholds, and a
failure is retried as often as its category allows (``workflows.task.retrying``). A task run
as a subagent first tries the subagent's remembered fixes on a failed run
(``workflows.task.subagent``), then asks reflection. A retry whose declared metrics get worse
is undone.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import DIAGNOSE_FAILURE
    from workflows.common.advisory import advise
    from workflows.common.changes import modified
    from workflows.common.gates import GateKeeper
    from workflows.constants import in_study
    from workflows.contracts.execution import ExecutionOutcome, TaskStatus
    from workflows.contracts.executive import DiagnoseInput, FailureKind, GateRecord, ReflectionNote
    from workflows.contracts.plan import JobSpec, Scalar
    from workflows.contracts.policy import GateKind
    from workflows.task.phases import Phase
    from workflows.task.reflecting import Reflector
    from workflows.task.regression import has_estimates, regressed_metrics
    from workflows.task.retrying import spent_words
    from workflows.task.state import Finish, TaskState
    from workflows.task.subagent import SubagentMemory

FAILED_PHASE: dict[FailureKind, Phase] = {
    "rejected": Phase.REVIEW, "execution": Phase.EXECUTE, "verification": Phase.VERIFY}
"""The phase whose failure each kind of diagnosis is about."""
_FAILED: dict[FailureKind, str] = {
    "rejected": "the review's refusal", "execution": "the failed run",
    "verification": "the failed verification"}


def failure_class(kind: FailureKind, outcome: ExecutionOutcome | None) -> str:
    """The failure class retries are counted by: the run's outcome, else the kind."""
    if kind == "execution" and outcome is not None:
        return outcome.outcome
    return "rejected" if kind == "rejected" else "verification"


class Recovery:
    """The recovery steps of one task.

    Args:
        state: the task's state (the failed job, its verdicts and outcome, the provenance).
        gates: the task's gates (the error gate, the step and result gates).
        reflector: asks the reflector role about unnamed failures (None: never asked).
    """

    def __init__(self, state: TaskState, gates: GateKeeper,
                 reflector: Reflector | None = None) -> None:
        self.state = state
        self.gates = gates
        self.memory = SubagentMemory(state)
        self.reflector = reflector

    async def retry(self, retry_phase: Phase, kind: FailureKind, *, failed: str, exhausted: str,
                    status_if_none: TaskStatus) -> JobSpec | Finish:
        """Enter ``retry_phase`` and get the patched job, or the :class:`Finish` recovery ends in.

        Raises:
            Finish: with ``exhausted`` as the reason, once the phase's retries are spent.
        """
        state = self.state
        failure = failure_class(kind, state.outcome)
        if state.retries_spent(retry_phase, failure):
            raise Finish("failed_retry", exhausted + self.spent(failure))
        state.move(retry_phase)
        state.bump(retry_phase)
        if kind == "execution" and state.outcome is not None and self.memory.has_memory():
            remembered = self.memory.next_job(state.outcome.outcome)
            if remembered is not None:
                return remembered
        note = await self.reflect(kind)
        try:
            return await self._recover(note, first_failure=state.first(retry_phase),
                                       failed=failed, status_if_none=status_if_none)
        except Finish as end:
            return end

    def spent(self, failure: str) -> str:
        """Which category's retries were spent, when retries go by category."""
        if self.state.task.policy.max_retries is not None:
            return ""
        return "; " + spent_words(failure, self.state.retries_allowed(failure))

    async def reflect(self, kind: FailureKind) -> ReflectionNote | None:
        """A diagnosis from reflection, or None (recorded as a miss) if it is slow or down."""
        state, task = self.state, self.state.task
        assert state.job is not None
        req = DiagnoseInput(
            run_id=task.run_id, task_id=task.decision.task_id, kind=kind,
            attempt=state.attempts.get(FAILED_PHASE[kind], 0), job=state.job,
            verdicts=state.verdicts, outcome=state.outcome if kind != "rejected" else None,
            verification=state.verification if kind == "verification" else None,
            previous_patches=list(state.patches), checks=task.decision.checks,
            policy=task.policy.review, action=task.decision.action,
            input_names=list(task.decision.inputs), memory=task.policy.memory.enabled)
        note = state.answered(await advise(
            DIAGNOSE_FAILURE, req, queues=task.queues, limit_s=task.policy.reflection_timeout_s,
            log=state.log, agent="reflector",
            summary=f"Task {req.task_id} · diagnose {_FAILED[kind]} (attempt {req.attempt})"))
        if note is None:
            return None
        self._record(note)
        if self.reflector is not None:
            mine = await self.reflector.second_opinion(req, note)
            if mine is not None:
                self._record(mine)
                return mine
        return note

    def _record(self, note: ReflectionNote) -> None:
        """Keep a note in the task's notes and provenance, and as an event."""
        state = self.state
        state.notes.append(note)
        state.provenance.reflection_ids.append(note.note_id)
        state.log.add("agent_call", "complete", agent="reflector", status=note.decision,
                      outputs={"note_id": note.note_id, "root_cause": note.root_cause,
                               "likely_fix": note.likely_fix, "confidence": note.confidence,
                               "patch": note.patch.model_dump(mode="json") if note.patch else None,
                               "source": note.source, "memory_ref": note.memory_ref,
                               "patterns": [p.key for p in note.patterns],
                               "reason": note.reason})

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
        resolution = await self.resolve(note)
        record = self.state.record_patch(note.patch, note.decision)
        if resolution == "defer":
            record.outcome = "deferred"
            raise Finish("deferred", f"{diagnosis}; patch {note.patch.patch_id} "
                                     f"{self._not_applied(note)}: "
                                     f"{note.reason or 'confidence too low'}")
        if resolution == "reject":
            record.outcome = "rejected"
            raise Finish("failed", f"{diagnosis}; patch {note.patch.patch_id} was rejected at "
                                   "the error gate")
        record.outcome = "applied"
        self.state.log.add("tool_call", "complete", agent="reflector", status="patched",
                           outputs={"patch_id": note.patch.patch_id, "sha256": note.patch.sha256,
                                    "changes": [c.model_dump(mode="json")
                                                for c in note.patch.changes]})
        return note.patched_job

    def _not_applied(self, note: ReflectionNote) -> str:
        """Why a deferred patch was not applied; only a study's cycle has a next cycle."""
        if in_study(self.state.task.run_id):
            return "deferred to the next cycle"
        if note.decision == "human":
            return ("not applied: it needs a person's approval, and the run has no error gate "
                    "(--human-gate error) to ask for it")
        return "not applied: too uncertain to apply unasked"

    async def resolve(self, note: ReflectionNote) -> str:
        """Apply, reject or defer a recovery, by the confidence thresholds and policy."""
        if note.decision in ("retry", "retry_logged"):
            if note.decision == "retry_logged":
                self.state.log.add("agent_call", "info", agent="reflector", status="retry_logged",
                                   outputs={"note_id": note.note_id,
                                            "confidence": note.confidence})
            return "apply"
        if note.decision == "human" and self.gates.needs_person("error"):
            gate = await self.human_gate(
                "error", f"{note.root_cause}: apply {note.likely_fix} "
                         f"(confidence {note.confidence:.2f})?", finish_on_reject=False)
            if gate.status == "branched":
                self.state.branches_asked = list(gate.branches)
                names = ", ".join(b.name for b in gate.branches)
                raise Finish("failed", f"{note.root_cause}: answered at the error gate by "
                                       f"{gate.by} with branches {names} (the run starts them)")
            if gate.status == "modified":
                note.patched_job = self.modified_job(gate.set)
            return "apply" if self.gates.approved(gate) else "reject"
        return "defer"

    def modified_job(self, sets: dict[str, Scalar]) -> JobSpec:
        """The task's job with a person's changes, held to the guardrails, and recorded.

        Raises:
            ChangeRefusedError: there is no job yet, a value cannot apply or a guardrail
                is broken.
        """
        state = self.state
        job, changes = modified(state.job, sets, None, task_id=state.task.decision.task_id,
                                name="", policy=state.task.policy.review)
        assert job is not None
        state.log.add("tool_call", "complete", agent="person", status="modified",
                      outputs={"changes": [c.model_dump(mode="json") for c in changes]})
        return job

    async def human_gate(self, kind: GateKind, question: str, *,
                         finish_on_reject: bool = True) -> GateRecord:
        """Ask a person; a refusal ends the task unless ``finish_on_reject`` is off."""
        self.state.move(Phase.HUMAN_GATE)
        gate = await self.gates.ask(kind, question)
        prov = self.state.provenance
        prov.approvals.append(gate)
        if not self.gates.approved(gate) and finish_on_reject:
            raise Finish("failed" if kind == "result" else "rejected",
                         f"{kind} gate {gate.status} by {gate.by}"
                         + (f": {gate.comment}" if gate.comment else ""))
        if gate.by:
            prov.approval.decided_by.append(f"{kind}:{gate.by}")
        return gate

    def roll_back_if_regressed(self, previous: tuple[JobSpec, ExecutionOutcome],
                               outcome: ExecutionOutcome) -> None:
        """Undo a retry whose declared metrics regress against the attempt before it.

        Metrics written as estimates are judged by their point, ties within their intervals
        aside.
        """
        state = self.state
        old_job, old_outcome = previous
        declared = old_job.expected_metrics
        estimates = (has_estimates(old_outcome.metrics, declared)
                     or has_estimates(outcome.metrics, declared))
        regressions = regressed_metrics(old_outcome.metrics, outcome.metrics, declared,
                                        state.task.decision.checks,
                                        directional=old_outcome.outcome == "succeeded",
                                        estimates=estimates)
        if not regressions:
            return
        state.job, state.outcome = old_job, old_outcome
        if state.provenance.patches:
            state.provenance.patches[-1].outcome = "rolled_back: " + "; ".join(regressions)
        state.log.add("tool_call", "complete", agent="reflector", status="rolled_back",
                      outputs={"regressions": regressions})
        raise Finish("failed_retry", "the retry regressed "
                                     f"{'; '.join(regressions)}; its patch was rolled back")
