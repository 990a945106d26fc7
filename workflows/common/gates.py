"""Human gates inside workflows: open a gate, wait for a person (or the policy), record it.

A gate costs nothing while it waits (a durable timer and a condition), survives restarts, and
is answered by the ``approve`` signal or the ``decide`` update. Decisions are checked against
the gate that is open and the policy's approvers. A refused one is recorded as an ``approval``
event (status ``refused``, who and why) and kept on the gate, and a refused ``decide`` fails
with a non-retryable ``GateRefused`` error saying who may decide and how.

Whatever a caller sends is bounded before it is kept (``workflows.common.bounds``): a payload
over :data:`DECISION_MAX_BYTES` is refused unread, a gate keeps only its latest refusals, each
cut short, and records the first :data:`REFUSAL_EVENTS` as events (the rest are counted). An
oversize ``decide`` is refused by its validator and so never enters the history at all; that
is also why it cannot be recorded (a validator may not change the workflow's state).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from workflows.common.bounds import PayloadRefused, bounded, claimed_author, clip, read_json
    from workflows.common.decisions import STATUS, check_kind
    from workflows.common.decisions import GateRefusedError as GateRefusedError
    from workflows.common.details import span, wait_summary, who_may
    from workflows.common.errors import ErrorType
    from workflows.common.events import EventLog
    from workflows.common.validation import worded_errors
    from workflows.contracts.executive import (
        BY_CHARS,
        COMMENT_CHARS,
        DECISION_MAX_BYTES,
        REFUSAL_CHARS,
        REFUSAL_EVENTS,
        REFUSALS_KEPT,
        GateDecision,
        GateRecord,
    )
    from workflows.contracts.policy import GateKind, GatePolicy

ArgT = TypeVar("ArgT")
ResultT = TypeVar("ResultT")

PAYLOAD_CHARS = 1000
"""How much of a refused payload its event shows."""
_HINT = f" (`by` up to {BY_CHARS} characters, `comment` up to {COMMENT_CHARS})"


class GateKeeper:
    """The gates of one workflow: at most one open at a time, all kept for provenance."""

    def __init__(self, policy: GatePolicy, log: EventLog, task_id: str | None = None) -> None:
        self.policy = policy
        self.log = log
        self.task_id = task_id
        self.records: list[GateRecord] = []
        self._open: GateRecord | None = None
        self._stray = 0
        """Refusals that came while no gate had ever opened (kept in ``stray``)."""
        self.stray: list[str] = []
        """The latest of those refusals (who: why), for ``progress``."""
        self._withdrawn = ""
        """Who ended the run (``withdraw``): no gate waits for a person any more."""

    @property
    def waiting(self) -> GateRecord | None:
        """The gate waiting for a decision, if any."""
        return self._open

    @property
    def approvers(self) -> list[str]:
        """Who may decide the gate waiting here (empty: anyone, or no gate waits)."""
        return list(self.policy.rule(self._open.gate).approvers) if self._open else []

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
        check_kind(decision, gate)

    def offer(self, decision: GateDecision) -> GateRecord:
        """Apply a decision, or record why it was refused (signals cannot answer back)."""
        try:
            self.validate(decision)
        except GateRefusedError as err:
            self.refuse(decision, str(err))
            raise
        gate = self._open
        assert gate is not None
        gate.status = STATUS[decision.decision]
        gate.by, gate.comment, gate.decided_at = decision.by, decision.comment, workflow.now()
        gate.choice, gate.set, gate.branches = decision.choice, decision.set, decision.branches
        inputs: dict[str, Any] = {"gate": gate.gate, "task_id": self.task_id}
        gate.channel = decision.channel or "temporal"
        inputs["channel"] = gate.channel
        self.log.add("approval", "complete", agent=decision.by, status=gate.status,
                     inputs=inputs,
                     outputs={"comment": decision.comment, "refused": gate.refused_count})
        self.log.details.set("gate", f"{gate.gate} gate {gate.decided_text()}")
        return gate

    def refusals(self) -> list[str]:
        """The latest refused decisions (who: why), on any gate or none, oldest first."""
        kept = [line for record in self.records for line in record.refused]
        return [*kept, *self.stray][-REFUSALS_KEPT:]

    def withdraw(self, by: str) -> None:
        """Reject the gate waiting here, and every later one, because the run ends (``by``)."""
        self._withdrawn = by
        if self._open is not None and self._open.status == "waiting":
            self._reject_withdrawn(self._open)

    def _reject_withdrawn(self, gate: GateRecord) -> None:
        gate.status, gate.by, gate.decided_at = "rejected", self._withdrawn, workflow.now()
        gate.comment = "withdrawn: the run was cancelled"
        self.log.add("approval", "complete", agent=self._withdrawn, status="withdrawn",
                     inputs={"gate": gate.gate, "task_id": self.task_id})

    def refuse(self, decision: GateDecision, reason: str) -> None:
        """Record a refused decision on the open gate (or the last one) and as an event."""
        self._refuse(decision.by, decision.model_dump(mode="json"), reason)

    def refuse_request(self, by: str, what: str, reason: str) -> None:
        """Record a refused request that is no decision (a study's ``stop``) like one."""
        self._refuse(by, {"request": what}, reason)

    def _refuse(self, by: str, payload: Any, reason: str) -> None:
        by, reason = clip(by, BY_CHARS), clip(reason, REFUSAL_CHARS)
        target = self._open or (self.records[-1] if self.records else None)
        line = clip(f"{by}: {reason}", REFUSAL_CHARS)
        if target is None:
            self._stray += 1
            count = self._stray
            self.stray = [*self.stray, line][-REFUSALS_KEPT:]
        else:
            target.refused = [*target.refused, line][-REFUSALS_KEPT:]
            target.refused_count += 1
            count = target.refused_count
        if count <= REFUSAL_EVENTS:
            self.log.add("approval", "error", agent=by, status="refused",
                         inputs={"payload": bounded(payload, PAYLOAD_CHARS)},
                         outputs={"reason": reason, "refused": count})
            self.log.flush_soon(f"refused decision: {line}")
            self.log.details.set("refused", f"Latest refused decision ({count} so far): {line}")

    def parse(self, raw: RawValue) -> GateDecision | None:
        """A signal's raw argument as a decision, or None after recording why it is not one."""
        try:
            return self.read(raw)
        except GateRefusedError:
            return None

    def read(self, raw: RawValue) -> GateDecision:
        """A raw argument as a decision: its size is checked before it is decoded.

        Raises:
            GateRefusedError: it is too large, undecodable or malformed (the refusal is
                recorded).
        """
        try:
            payload = read_json(raw, limit=DECISION_MAX_BYTES, what="decision", hint=_HINT)
        except PayloadRefused as err:
            self._refuse("unknown", f"<{len(raw.payload.data):,} bytes, not kept>", str(err))
            raise GateRefusedError(str(err)) from None
        try:
            return GateDecision.model_validate(payload)
        except ValidationError as err:
            problems = "; ".join(clip(e, 120) for e in worded_errors(
                err, GateDecision, whole="payload", most=4, plain=True))
            reason = f"malformed decision: {problems}"
            self._refuse(claimed_author(payload, BY_CHARS), payload, reason)
            raise GateRefusedError(reason) from None

    # --- the decide update -------------------------------------------------------------------

    def check_size(self, raw: RawValue) -> None:
        """The ``decide`` validator: refuse a payload too large to read (never recorded)."""
        size = len(raw.payload.data)
        if size > DECISION_MAX_BYTES:
            raise ApplicationError(
                f"the decision is {size:,} bytes, over the {DECISION_MAX_BYTES:,}-byte limit"
                f"{_HINT}; it was not read. {self.how()}",
                type=ErrorType.GATE_REFUSED, non_retryable=True)

    def decision_of(self, raw: RawValue) -> GateDecision:
        """A ``decide`` update's raw argument as a decision.

        Raises:
            ApplicationError: ``GateRefused``, non-retryable, once the refusal is recorded.
        """
        return self._final(self.read, raw)

    def settle(self, decision: GateDecision) -> GateRecord:
        """The ``decide`` update: settle the open gate with ``decision`` and return it.

        Raises:
            ApplicationError: ``GateRefused``, non-retryable, once the refusal is recorded.
        """
        return self._final(self.offer, decision)

    def _final(self, step: Callable[[ArgT], ResultT], arg: ArgT) -> ResultT:
        """``step(arg)``, with a refusal turned into the update's final error."""
        try:
            return step(arg)
        except GateRefusedError as err:
            raise self.refusal(str(err)) from None

    def refused(self, decision: GateDecision, reason: str) -> ApplicationError:
        """Record ``decision`` as refused for ``reason``; the error a ``decide`` raises."""
        self.refuse(decision, reason)
        return self.refusal(reason)

    def refusal(self, reason: str) -> ApplicationError:
        """The non-retryable error a refused ``decide`` fails with: why, then who and how."""
        return ApplicationError(f"{clip(reason, REFUSAL_CHARS)}. {self.how()}",
                                type=ErrorType.GATE_REFUSED, non_retryable=True)

    def how(self) -> str:
        """Who may decide the gate waiting here, and the command that does it."""
        gate = self._open
        if gate is None:
            return ("No gate is waiting for a decision here now; `assay gates` lists the "
                    "gates that are.")
        approvers = self.policy.rule(gate.gate).approvers
        who = f"one of: {clip(', '.join(approvers), 300)}" if approvers else "anyone"
        task = f" --task {self.task_id}" if self.task_id else ""
        whose = f" of task {self.task_id}" if self.task_id else ""
        by = approvers[0] if len(approvers) == 1 else "NAME"
        return (f"The {gate.gate} gate{whose} waits for a decision by {who}: "
                f"`assay approve {self.log.run_id} --gate {gate.gate}{task} --by {by}` "
                "(add --reject to reject it).")

    async def ask(self, kind: GateKind, question: str) -> GateRecord:
        """Open a gate and wait for its decision, or for its timeout and the policy's action."""
        rule = self.policy.rule(kind)
        gate = GateRecord(gate=kind, task_id=self.task_id, opened_at=workflow.now(),
                          question=question)
        self.records.append(gate)
        if self._withdrawn:  # the run is ending: nobody is asked any more
            self._reject_withdrawn(gate)
            return gate
        self._open = gate
        self.log.add("approval", "pending", status="waiting",
                     inputs={"gate": kind, "task_id": self.task_id, "question": question,
                             "approvers": rule.approvers, "timeout_s": rule.timeout_s})
        self.log.details.set("gate", self._waiting_text(rule.timeout_s, rule.on_timeout))
        await self.log.flush()
        what = f"{kind} gate" + (f" of task {self.task_id}" if self.task_id else "")
        summary = wait_summary(what, rule.approvers, rule.timeout_s)
        try:
            await workflow.wait_condition(lambda: gate.status != "waiting",
                                          timeout=timedelta(seconds=rule.timeout_s),
                                          timeout_summary=summary)
        except TimeoutError:
            gate.status, gate.decided_at = "timed_out", workflow.now()
            gate.by = f"policy:timeout->{rule.on_timeout}"
            self.log.add("approval", "complete", agent="policy", status="timed_out",
                         inputs={"gate": kind, "task_id": self.task_id},
                         outputs={"action": rule.on_timeout})
            self.log.details.set("gate", f"{kind} gate timed out: {rule.on_timeout} (policy)")
        finally:
            self._open = None
        await self.log.flush()
        return gate

    def _waiting_text(self, timeout_s: float, on_timeout: str) -> str:
        """The details of a waiting gate: what, since when, who may decide, and how."""
        gate = self._open
        assert gate is not None
        return (f"**Waiting** at the {gate.gate} gate since {gate.opened_at:%Y-%m-%d %H:%M} "
                f"UTC, for {who_may(self.approvers)} (then {on_timeout} after "
                f"{span(timeout_s)}): {clip(gate.question, 600)}\n\n{self.how()}")

    def approved(self, gate: GateRecord) -> bool:
        """Whether a settled gate lets the work go on (a timeout follows the policy)."""
        if gate.status == "timed_out":
            return self.policy.rule(gate.gate).on_timeout == "approve"
        return gate.status in ("approved", "modified")

