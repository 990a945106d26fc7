"""Tools a role may call before it answers, answered by the activity itself (bounded).

A structured call offers one tool, the output contract. A role may also be given a *helper*:
more tools (the researcher's ``lookup_docs``) whose calls the gateway answers in the same
conversation, at most ``limit`` times per call, before the model gives its answer. Each
helper round is a request of its own: recorded, replayed and accounted like a repair round.
"""

from __future__ import annotations

from typing import Any, Protocol

from activities.llm.output import as_object


class Helper(Protocol):
    """Extra tools, and the answers to their calls."""

    limit: int
    """Helper calls one model call may make; later ones go back as an invalid answer."""

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered besides the output contract (Messages API form)."""
        ...

    def answer(self, name: str, tool_input: dict[str, Any]) -> tuple[str, bool]:
        """The text answering one call, and whether it is an error; never raises."""
        ...


def helper_calls(response: dict[str, Any], helper: Helper) -> list[dict[str, Any]]:
    """The response's calls of the helper's tools (empty if it called anything else too)."""
    names = {str(t.get("name")) for t in helper.tools}
    blocks = [b for b in map(as_object, response.get("content") or []) if b is not None]
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    if not calls or any(c.get("name") not in names for c in calls):
        return []
    return calls


def helper_turn(helper: Helper, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user turn with one ``tool_result`` per helper call."""
    turn: list[dict[str, Any]] = []
    for call in calls:
        text, error = helper.answer(str(call.get("name")), as_object(call.get("input")) or {})
        turn.append({"type": "tool_result", "tool_use_id": str(call.get("id", "")),
                     "content": text, **({"is_error": True} if error else {})})
    return turn
