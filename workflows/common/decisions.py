"""What a gate makes of a decision: the status it sets, and the kinds each gate takes.

Kept apart from the gate keeper (``workflows.common.gates``) so each reads on its own: these
are plain checks of a :class:`GateDecision` against the :class:`GateRecord` it would settle.

Deterministic: imported by workflow code.
"""

from __future__ import annotations

from typing import Any

from workflows.contracts.gates import GateDecision, GateRecord

STATUS: dict[str, Any] = {"approve": "approved", "reject": "rejected", "modify": "modified",
                          "branch": "branched"}
"""The status a gate takes from each kind of decision."""


class GateRefusedError(ValueError):
    """A decision that does not fit the open gate or comes from someone not allowed."""


def check_kind(decision: GateDecision, gate: GateRecord) -> None:
    """Refuse a decision its gate cannot take (``modify`` at a plan gate, say).

    Raises:
        GateRefusedError: why, and what the gate takes instead.
    """
    kind = decision.decision
    if kind == "modify" and gate.gate not in ("step", "error"):
        raise GateRefusedError(f"a {gate.gate} gate cannot be modified: `modify` changes the "
                               "job at a step or error gate")
    if kind == "modify" and not decision.set:
        raise GateRefusedError("`modify` needs `set`: the changes to the job")
    if kind == "branch" and gate.gate != "error":
        raise GateRefusedError(f"a {gate.gate} gate cannot be answered with branches: only an "
                               "error gate can")
    if kind == "branch" and not decision.branches:
        raise GateRefusedError("`branch` needs `branches`: the branches to start")
    if decision.choice is not None and gate.gate not in ("branch", "cycle"):
        raise GateRefusedError(f"`choice` is for the branch and cycle gates, not the "
                               f"{gate.gate} gate")
    if kind in ("modify", "branch") and gate.gate in ("branch", "cycle"):
        raise GateRefusedError(f"a {gate.gate} gate is approved (with a `choice`, or "
                               "without), or rejected")
