"""Human gates inside workflows: open a gate, wait for a person (or the policy), record it.

A gate costs nothing while it waits (a durable timer and a condition), survives restarts, and
is answered by the ``approve`` signal or the ``decide`` update. Decisions are checked against
the gate that is open and the policy's approvers; refused ones are kept with the reason.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from workflows.common.events import EventLog
    from workflows.contracts.executive import GateDecision, GateRecord
    from workflows.contracts.policy import GateKind, GatePolicy


class GateRefusedError(ValueError):
    """A decision that does not fit the open gate or comes from someone not allowed."""


class GateKeeper:
    """The gates of one workflow: at most one open at a time, all kept for provenance."""

    def __init__(self, policy: GatePolicy, log: EventLog, task_id: str | None = None) -> None:
        self.policy = policy
        self.log = log
        self.task_id = task_id
        self.records: list[GateRecord] = []
        self._open: GateRecord | None = None

    @property
    def waiting(self) -> GateRecord | None:
        """The gate waiting for a decision, if any."""
        return self._open

    def needs_person(self, kind: GateKind) -> bool:
        """Whether policy makes ``kind`` a human gate."""
        return self.policy.rule(kind).human

    def validate(self, decision: GateDecision) -> None:
        """Raise :class:`GateRefusedError` if ``decision`` cannot settle the open gate."""
        gate = self._open
        if gate is None:
            raise GateRefusedError("no gate is waiting for a decision here")
        if decision.gate != gate.gate:
            raise GateRefusedError(f"the open gate is {gate.gate!r}, not {decision.gate!r}")
        if decision.task_id is not None and decision.task_id != self.task_id:
            raise GateRefusedError(f"this gate belongs to task {self.task_id!r}, "
                                   f"not {decision.task_id!r}")
        allowed = self.policy.rule(gate.gate).approvers
        if allowed and decision.by not in allowed:
            raise GateRefusedError(f"{decision.by!r} may not decide the {gate.gate} gate "
                                   f"(allowed: {', '.join(allowed)})")

    def offer(self, decision: GateDecision) -> GateRecord:
        """Apply a decision, or record why it was refused (signals cannot answer back)."""
        try:
            self.validate(decision)
        except GateRefusedError as err:
            self.refuse(decision, str(err))
            raise
        gate = self._open
        assert gate is not None
        gate.status = "approved" if decision.decision == "approve" else "rejected"
        gate.by, gate.comment, gate.decided_at = decision.by, decision.comment, workflow.now()
        self.log.add("approval", "complete", agent=decision.by, status=gate.status,
                     inputs={"gate": gate.gate, "task_id": self.task_id},
                     outputs={"comment": decision.comment})
        return gate

    def refuse(self, decision: GateDecision, reason: str) -> None:
        """Record a refused decision on the open gate (or the last one) and as an event."""
        self._refuse(decision.by, decision.model_dump(mode="json"), reason)

    def _refuse(self, by: str, payload: Any, reason: str) -> None:
        target = self._open or (self.records[-1] if self.records else None)
        if target is not None:
            target.refused.append(f"{by}: {reason}")
        self.log.add("approval", "error", agent=by[:128], status="refused",
                     inputs={"payload": payload}, outputs={"reason": reason})

    def parse(self, payload: Any) -> GateDecision | None:
        """A signal's raw JSON as a decision, or None after recording why it is malformed."""
        try:
            return GateDecision.model_validate(payload)
        except ValidationError as err:
            fields = cast("dict[str, Any]", payload) if isinstance(payload, dict) else {}
            by = str(fields.get("by") or "unknown")
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: "
                                 f"{e['msg']}" for e in err.errors()[:5])
            text = repr(cast(object, payload))
            shown = cast(object, payload) if len(text) <= 2000 else f"{text[:2000]}..."
            self._refuse(by, shown, f"malformed decision: {problems}")
            return None

    async def ask(self, kind: GateKind, question: str) -> GateRecord:
        """Open a gate and wait for its decision, or for its timeout and the policy's action."""
        rule = self.policy.rule(kind)
        gate = GateRecord(gate=kind, task_id=self.task_id, opened_at=workflow.now(),
                          question=question)
        self.records.append(gate)
        self._open = gate
        self.log.add("approval", "pending", status="waiting",
                     inputs={"gate": kind, "task_id": self.task_id, "question": question,
                             "approvers": rule.approvers, "timeout_s": rule.timeout_s})
        await self.log.flush()
        try:
            await workflow.wait_condition(lambda: gate.status != "waiting",
                                          timeout=timedelta(seconds=rule.timeout_s))
        except TimeoutError:
            gate.status, gate.decided_at = "timed_out", workflow.now()
            gate.by = f"policy:timeout->{rule.on_timeout}"
            self.log.add("approval", "complete", agent="policy", status="timed_out",
                         inputs={"gate": kind, "task_id": self.task_id},
                         outputs={"action": rule.on_timeout})
        finally:
            self._open = None
        await self.log.flush()
        return gate

    def approved(self, gate: GateRecord) -> bool:
        """Whether a settled gate lets the work go on (a timeout follows the policy)."""
        if gate.status == "timed_out":
            return self.policy.rule(gate.gate).on_timeout == "approve"
        return gate.status == "approved"
