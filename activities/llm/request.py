"""The Messages API request for a structured model call, and its repair rounds.

One tool, named after the output contract, whose input schema is the contract's JSON
schema; the answer is that tool's input. The system prompt (the stable prefix of a role) is
marked for prompt caching. A repair round appends the model's answer and a turn saying
what was wrong with it, so the same conversation continues.
"""

from __future__ import annotations

from typing import Any

from activities.llm.output import as_object
from activities.llm.recording import request_key
from workflows.contracts.spend import ModelCall

NO_FORCED_TOOL_CHOICE = ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5",
                         "claude-fable-5-1", "claude-mythos-5-1")
"""Model families that refuse a forced ``tool_choice`` (HTTP 400) because they always think
first; they get ``auto`` and the instruction below, and the repair loop catches prose."""


def tool_choice(model: str, name: str, *, helpers: bool = False) -> dict[str, Any]:
    """Force the one tool where the model allows it; otherwise let it choose.

    With helper tools offered, any tool is forced (the model picks a lookup or its answer).
    """
    if model.startswith(NO_FORCED_TOOL_CHOICE):
        return {"type": "auto", "disable_parallel_tool_use": True}
    if helpers:
        return {"type": "any", "disable_parallel_tool_use": True}
    return {"type": "tool", "name": name, "disable_parallel_tool_use": True}


def instruction(name: str, helpers: list[dict[str, Any]] | None = None) -> str:
    """How to answer, said once after the cached prefix."""
    text = (f"Give your answer by calling the `{name}` tool exactly once, with an input "
            "that fits its schema. Do not answer in prose.")
    if helpers:
        names = ", ".join(f"`{h['name']}`" for h in helpers)
        text += f" Before it you may call {names}, one call at a time."
    return text


class Conversation:
    """The growing message list of one ``call_model``, and the request for each round."""

    def __init__(self, call: ModelCall, model: str,
                 helpers: list[dict[str, Any]] | None = None) -> None:
        self.call = call
        self.model = model
        self.helpers = list(helpers or [])
        self.messages: list[dict[str, Any]] = [m.model_dump(mode="json")
                                               for m in call.messages]

    def request(self) -> dict[str, Any]:
        """Keyword arguments of ``messages.create`` for the current round."""
        call = self.call
        tool = {"name": call.output_schema_name, "input_schema": call.output_schema,
                "description": _description(call)}
        return {
            "model": self.model,
            "max_tokens": call.max_tokens,
            "system": [
                {"type": "text", "text": call.system, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": instruction(call.output_schema_name, self.helpers)},
            ],
            "messages": list(self.messages),
            "tools": [tool, *self.helpers],
            "tool_choice": tool_choice(self.model, call.output_schema_name,
                                       helpers=bool(self.helpers)),
        }

    def key(self) -> str:
        """The recording key of the current round's request."""
        return request_key(model=self.model, system=self.call.system, messages=self.messages,
                           tool_name=self.call.output_schema_name,
                           tool_schema=self.call.output_schema, helpers=self.helpers)

    def repair(self, answer: list[dict[str, Any]], turn: list[dict[str, Any]]) -> None:
        """Append the model's ``answer`` and the user ``turn`` that says what to fix.

        The answer's content blocks go back unchanged (thinking blocks included, as the API
        requires).
        """
        placeholder = [{"type": "text", "text": "(no answer)"}]
        self.messages.append({"role": "assistant", "content": answer or placeholder})
        self.messages.append({"role": "user", "content": turn})


    def last_user_text(self) -> str:
        """The text of the last user turn (tool results included), to name a missed request."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content: Any = message.get("content")
            if isinstance(content, str):
                return content
            blocks = [as_object(b) or {} for b in content]
            return " ".join(str(b.get("text") or b.get("content") or "") for b in blocks)
        return ""


def _description(call: ModelCall) -> str:
    about = call.output_schema.get("description")
    head = f"Record your answer as a {call.output_schema_name}."
    return f"{head} {about}" if isinstance(about, str) and about else head
