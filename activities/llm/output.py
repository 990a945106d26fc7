"""Reading a structured answer out of a model response, and saying what is wrong with it.

The answer is the input of the one tool the request offered (named after the contract).
It must be a JSON object, within a size limit, that validates against the contract's JSON
schema. When it does not, the problem is put in words the model can act on, so it can be
sent back for a repair.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError
from temporalio.exceptions import ApplicationError

from workflows.contracts.errors import ErrorType

MAX_ANSWER_BYTES = 256 * 1024
MAX_LISTED_ERRORS = 5

Vet = Callable[[dict[str, Any]], str | None]
"""A caller's own check of an answer that fits the schema: the problem in words, or None.

It catches what a JSON schema cannot say (a plan whose dependencies form a cycle, code that
does not parse); the problem goes back to the model like a schema violation."""


@dataclass(frozen=True)
class Reading:
    """What one response gave: a valid ``output``, or a ``problem`` to send back."""

    output: dict[str, Any] | None = None
    problem: str = ""
    hopeless: str = ""
    """Set when a repair cannot help (the answer was cut off at max_tokens, or refused)."""
    tool_use_ids: tuple[str, ...] = ()


class OutputContract:
    """The tool a request offers and the checks its answer must pass."""

    def __init__(self, name: str, schema: dict[str, Any], *,
                 max_bytes: int = MAX_ANSWER_BYTES) -> None:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as err:
            raise ApplicationError(
                f"the output schema {name!r} is not a valid JSON schema: {err.message} "
                f"(at {_path(err.absolute_schema_path)}); generate it with "
                "Contract.model_json_schema()", type=ErrorType.INVALID_OUTPUT_SCHEMA,
                non_retryable=True) from None
        self.name = name
        self.schema = schema
        self.max_bytes = max_bytes
        self._validator = Draft202012Validator(schema)

    def read(self, response: dict[str, Any], vet: Vet | None = None) -> Reading:
        """Read the answer in ``response`` (a Messages API response body).

        Args:
            response: the response body.
            vet: the caller's check of an answer that fits the schema.
        """
        content: Any = response.get("content") or []
        blocks = [b for b in map(as_object, content) if b is not None]
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        ids = tuple(str(b.get("id", "")) for b in calls)
        stop = response.get("stop_reason")
        if stop == "refusal":
            return Reading(hopeless="the model refused to answer", tool_use_ids=ids)
        problem, output = self._problem(blocks, calls)
        if output is not None and vet is not None and (rejected := vet(output)):
            problem, output = (f"The `{self.name}` input was rejected: {rejected} Call the "
                               f"`{self.name}` tool again with a corrected input."), None
        if not problem:
            return Reading(output=output, tool_use_ids=ids)
        if stop == "max_tokens":
            return Reading(problem=problem, tool_use_ids=ids, hopeless=(
                "the answer was cut off at max_tokens before it was complete; raise "
                "max_tokens for this role"))
        return Reading(problem=problem, tool_use_ids=ids)

    def _problem(self, blocks: list[dict[str, Any]], calls: list[dict[str, Any]],
                 ) -> tuple[str, dict[str, Any] | None]:
        again = f"Call the `{self.name}` tool once, with an input that fits its schema."
        if not calls:
            text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            said = f" (it said: {text.strip()[:200]!r})" if text.strip() else ""
            return f"The answer did not call the `{self.name}` tool{said}. {again}", None
        mine = [c for c in calls if c.get("name") == self.name]
        if not mine:
            names = ", ".join(repr(c.get("name")) for c in calls)
            return (f"There is no tool named {names}; the only tool is `{self.name}`. "
                    f"{again}"), None
        answer = mine[0].get("input")
        output = as_object(answer)
        if output is None:
            return (f"The `{self.name}` input must be a JSON object, not "
                    f"{type(answer).__name__} {str(answer)[:100]!r}. {again}"), None
        size = len(json.dumps(output, ensure_ascii=False).encode())
        if size > self.max_bytes:
            return (f"The `{self.name}` input is {size} bytes, over the limit of "
                    f"{self.max_bytes} bytes. Answer more concisely. {again}"), None
        errors = self.errors(output)
        if errors:
            return (f"The `{self.name}` input does not fit its schema: {'; '.join(errors)}. "
                    f"{again}"), None
        return "", output

    def errors(self, answer: dict[str, Any]) -> list[str]:
        """Schema violations of ``answer``, located by path (at most a few)."""
        errors: Any = self._validator.iter_errors(answer)  # pyright: ignore[reportUnknownMemberType]
        found: list[ValidationError] = sorted(
            errors, key=lambda e: list(map(str, e.absolute_path)))
        return [f"at {_path(e.absolute_path)}: {_said(e)}" for e in found[:MAX_LISTED_ERRORS]]


def _said(error: ValidationError) -> str:
    """The violation in at most ~300 characters: a long value is elided, not the verdict.

    jsonschema's messages start with the offending value, so a 60 000-character string
    would otherwise hide the words saying what is wrong with it.
    """
    limits = {"maxLength": "characters", "maxItems": "items", "maxProperties": "properties"}
    instance: Any = error.instance
    if error.validator in limits and isinstance(instance, str | list | dict):
        size = len(cast("str | list[Any] | dict[str, Any]", instance))
        return (f"is too long: {size} {limits[str(error.validator)]}, at most "
                f"{error.validator_value}")
    message = error.message
    return message if len(message) <= 300 else f"{message[:150]} ... {message[-140:]}"


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` as a JSON object, or None if it is not one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _path(parts: Any) -> str:
    """``warnings[0].message`` for a path of keys and indexes; ``the top level`` if empty."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return f"`{text.lstrip('.')}`" if text else "the top level"


def repair_turn(reading: Reading) -> list[dict[str, Any]]:
    """The user turn that sends ``reading.problem`` back to the model.

    A failed ``tool_result`` for every tool call the model made (the API requires one
    each), or plain text if it made none.
    """
    if not reading.tool_use_ids:
        return [{"type": "text", "text": reading.problem}]
    return [{"type": "tool_result", "tool_use_id": tool_id, "is_error": True,
             "content": reading.problem} for tool_id in reading.tool_use_ids]
