"""What people send a study: a plan for its next cycle, a stop, a decision at its gate.

:func:`decided` says what a settled ``cycle`` gate makes of the rules' decision.

Each is read raw, its size checked before it is decoded; a malformed one is refused with a
reason (an update fails with it, a signal records it). A ``cycle`` gate's ``choice`` names
the decision a person wants instead of the rules': ``iterate``, ``fix``, ``stop``, or
``pivot:H`` where ``H`` is an open hypothesis of the study's tree.
"""

from __future__ import annotations

from pydantic import ValidationError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from workflows.common.bounds import PayloadRefused, clip, read_json
from workflows.common.errors import ErrorType
from workflows.common.validation import worded_errors
from workflows.contracts.cycles import CyclePlan, StudyStop
from workflows.contracts.executive import GateRecord
from workflows.contracts.hypotheses import HypothesisTree
from workflows.contracts.study import CycleDecision
from workflows.research.planning import PlanRefused, sound_supplied

STOP_MAX_BYTES = 8_000
CHOICES = ("iterate", "fix", "stop", "pivot:H")


def study_plan(raw: RawValue) -> CyclePlan:
    """A supplied plan for the study's next cycle (a ``SuppliedPlan`` payload).

    Raises:
        ApplicationError: ``PlanRefused``, non-retryable: too large, malformed or invalid.
    """
    try:
        supplied = sound_supplied(raw)
    except PlanRefused as err:
        raise ApplicationError(str(err), type=ErrorType.PLAN_REFUSED,
                               non_retryable=True) from None
    return CyclePlan(plan_name=supplied.plan_name, plan_sha256=supplied.plan_sha256,
                     plan=supplied.plan, by=supplied.by)


def read_stop(raw: RawValue) -> StudyStop | str:
    """A ``stop`` signal's payload, or why it is refused (too large or malformed)."""
    try:
        payload = read_json(raw, limit=STOP_MAX_BYTES, what="stop")
    except PayloadRefused as err:
        return str(err)
    try:
        return StudyStop.model_validate(payload)
    except ValidationError as err:
        return "malformed stop: " + "; ".join(clip(e, 160) for e in worded_errors(
            err, StudyStop, whole="payload", most=4))


def override(choice: str, by: str, note: str, tree: HypothesisTree) -> CycleDecision:
    """The decision a person's ``choice`` at the ``cycle`` gate stands for.

    Raises:
        ValueError: not one of :data:`CHOICES`, or a pivot to no open hypothesis.
    """
    action, _, target = choice.partition(":")
    reason = f"{by} chose {choice}{note}"
    if action in ("iterate", "fix", "stop") and not target:
        return CycleDecision(action=action, by=by, reason=reason)
    if action == "pivot" and target:
        try:
            hypothesis = tree.get(target)
        except KeyError:
            raise ValueError(f"no hypothesis {target[:60]!r} in this study") from None
        if hypothesis.status not in ("open", "inconclusive"):
            raise ValueError(f"hypothesis {target!r} is already {hypothesis.status}")
        return CycleDecision(action="pivot", by=by, reason=reason, pursue=target,
                             hypotheses=[target])
    raise ValueError(f"choice {choice[:60]!r} is not one of {', '.join(CHOICES)}")


def decided(gate: GateRecord, decision: CycleDecision, *, approved: bool,
            tree: HypothesisTree) -> CycleDecision:
    """What a settled ``cycle`` gate made of the rules' ``decision``.

    A timeout keeps it when the policy approves (``approved``) and stops otherwise; a
    rejection stops; a ``choice`` overrides it; an approval keeps it, confirmed. A person's
    decision carries their mark (who, when, comment, channel) as ``person``, so a
    confirmation is told from the rules'.
    """
    if gate.status == "timed_out":
        if approved:
            return decision
        return CycleDecision(action="stop", by="policy",
                             reason="the cycle gate timed out and its policy stops")
    by = gate.by or "person"
    note = f" ({clip(gate.comment, 300)})" if gate.comment else ""
    if gate.status == "rejected":
        chosen = CycleDecision(action="stop", by=by, reason=f"stopped by {by}{note}")
    elif gate.choice:
        chosen = override(gate.choice, by, note, tree)
    else:
        chosen = decision
    return chosen.model_copy(update={"person": gate.person()})
