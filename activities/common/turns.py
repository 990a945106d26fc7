"""The local activity that passes a workflow's turn (``workflows.common.turns``)."""

from __future__ import annotations

from workflows.catalogue import PASS_TURN


@PASS_TURN.defn
async def pass_turn() -> bool:
    """Do nothing: the calling workflow's activation ends, and it goes on in the next."""
    return True
