"""The TaskWorkflow state machine: its phases and the one table of legal moves.

intake -> implement -> review -> [approval retry] -> [human gate] -> execute
-> [execution retry] -> [debug] -> verify -> [verification retry] -> finalize -> done

``debug`` is where three debuggers' fixes are reviewed and run side by side when reflection
had no patch for an execution failure.

Every phase change goes through :func:`check_transition`; an illegal move is a bug and fails
the workflow task loudly (Temporal retries the task once a fix is deployed; it is never
silently ignored).
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Phases of one task, in pipeline order."""

    INTAKE = "intake"
    IMPLEMENT = "implement"
    REVIEW = "review"
    APPROVAL_RETRY = "approval_retry"
    HUMAN_GATE = "human_gate"
    EXECUTE = "execute"
    EXECUTION_RETRY = "execution_retry"
    DEBUG = "debug"
    VERIFY = "verify"
    VERIFICATION_RETRY = "verification_retry"
    FINALIZE = "finalize"
    DONE = "done"


_P = Phase
TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    _P.INTAKE: frozenset({_P.IMPLEMENT, _P.VERIFY, _P.FINALIZE}),
    _P.IMPLEMENT: frozenset({_P.REVIEW, _P.FINALIZE}),
    _P.REVIEW: frozenset({_P.APPROVAL_RETRY, _P.HUMAN_GATE, _P.EXECUTE, _P.FINALIZE}),
    _P.APPROVAL_RETRY: frozenset({_P.REVIEW, _P.HUMAN_GATE, _P.FINALIZE}),
    _P.HUMAN_GATE: frozenset({_P.REVIEW, _P.EXECUTE, _P.VERIFY, _P.FINALIZE}),
    _P.EXECUTE: frozenset({_P.VERIFY, _P.EXECUTION_RETRY, _P.FINALIZE}),
    _P.EXECUTION_RETRY: frozenset({_P.EXECUTE, _P.DEBUG, _P.HUMAN_GATE, _P.FINALIZE}),
    _P.DEBUG: frozenset({_P.VERIFY, _P.HUMAN_GATE, _P.FINALIZE}),
    _P.VERIFY: frozenset({_P.VERIFICATION_RETRY, _P.HUMAN_GATE, _P.FINALIZE}),
    _P.VERIFICATION_RETRY: frozenset({_P.VERIFY, _P.HUMAN_GATE, _P.FINALIZE}),
    _P.FINALIZE: frozenset({_P.DONE}),
    _P.DONE: frozenset(),
}
"""From each phase, the phases a task may move to next."""

class IllegalTransitionError(RuntimeError):
    """A phase change the transition table does not allow (a programming error)."""


def check_transition(current: Phase, nxt: Phase) -> Phase:
    """Return ``nxt`` if moving there from ``current`` is legal, else raise."""
    if nxt not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "nothing"
        raise IllegalTransitionError(f"illegal phase change {current} -> {nxt} "
                                     f"(allowed from {current}: {allowed})")
    return nxt
