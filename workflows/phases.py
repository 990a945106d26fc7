"""The TaskWorkflow state machine: its phases and the one table of legal moves.

Every phase change goes through :func:`check_transition`; an illegal move is a bug and fails
the workflow task loudly (it is retried by Temporal after a fix is deployed, never ignored).
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Phases of one task, in pipeline order."""

    INTAKE = "intake"
    IMPLEMENT = "implement"
    EXECUTE = "execute"
    VERIFY = "verify"
    FINALIZE = "finalize"
    DONE = "done"


TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.INTAKE: frozenset({Phase.IMPLEMENT, Phase.FINALIZE}),
    Phase.IMPLEMENT: frozenset({Phase.EXECUTE, Phase.FINALIZE}),
    Phase.EXECUTE: frozenset({Phase.VERIFY, Phase.FINALIZE}),
    Phase.VERIFY: frozenset({Phase.FINALIZE}),
    Phase.FINALIZE: frozenset({Phase.DONE}),
    Phase.DONE: frozenset(),
}


class IllegalTransitionError(RuntimeError):
    """A phase change the transition table does not allow (a programming error)."""


def check_transition(current: Phase, nxt: Phase) -> Phase:
    """Return ``nxt`` if moving there from ``current`` is legal, else raise."""
    if nxt not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "nothing"
        raise IllegalTransitionError(f"illegal phase change {current} -> {nxt} "
                                     f"(allowed from {current}: {allowed})")
    return nxt
