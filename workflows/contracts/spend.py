"""Contracts of the model layer: one model call in, one structured answer out.

Agent roles ask a model for a typed answer through the ``call_model`` activity. The call
carries the prompt and the JSON schema of the pydantic contract it wants back; the answer
carries that contract as a dict (the caller validates it into its model), token usage and
cost. Pure models only: no API key, no client, nothing that performs I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from workflows.contracts.base import Model

TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class ChatMessage(Model):
    """One turn of the conversation: text, or content blocks as the Messages API takes them."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class Usage(Model):
    """Tokens and dollars spent; ``a + b`` sums two usages (e.g. over repair rounds)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_models: list[str] = Field(default_factory=list[str])
    """Models with no known price: their tokens are counted but cost nothing here."""

    @property
    def total_tokens(self) -> int:
        """Every token billed: fresh input, output, cache writes and cache reads."""
        return (self.input_tokens + self.output_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=(self.cache_creation_input_tokens
                                         + other.cache_creation_input_tokens),
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            unpriced_models=sorted({*self.unpriced_models, *other.unpriced_models}),
        )


class Budget(Model):
    """A run's (or task's) spending limit and what it has spent so far.

    The caller adds each answer's usage to ``spent``; ``call_model`` refuses to start a call
    once a limit is reached.
    """

    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    spent: Usage = Field(default_factory=Usage)

    def exhausted_by(self, extra: Usage | None = None) -> str | None:
        """Which limit ``spent`` (plus ``extra``) has reached, in words; None if neither."""
        spent = self.spent + extra if extra is not None else self.spent
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            return f"token budget of {self.max_tokens} reached ({spent.total_tokens} spent)"
        if self.max_cost_usd is not None and spent.cost_usd >= self.max_cost_usd:
            return (f"cost budget of ${self.max_cost_usd:.4f} reached "
                    f"(${spent.cost_usd:.4f} spent)")
        return None

    def exhausted(self) -> bool:
        """Whether a limit has been reached."""
        return self.exhausted_by() is not None

    def add(self, usage: Usage) -> Budget:
        """This budget with ``usage`` added to what it has spent."""
        return self.model_copy(update={"spent": self.spent + usage})


class ModelCall(Model):
    """Input of ``call_model``: a prompt and the contract the answer must fit."""

    run_id: str
    task_id: str | None = None
    role: str
    model: str | None = None
    """None means the gateway's default model for ``role``."""
    system: str
    """The stable prefix (role instructions, policy, schema notes); cached across calls."""
    messages: list[ChatMessage] = Field(min_length=1)
    output_schema_name: str = Field(pattern=TOOL_NAME_PATTERN)
    output_schema: dict[str, Any]
    """``Contract.model_json_schema()`` of the pydantic model the caller wants back."""
    max_tokens: int = Field(default=4096, ge=1)
    max_repairs: int = Field(default=2, ge=0, le=5)
    budget: Budget | None = None

    @field_validator("output_schema")
    @classmethod
    def _object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object":
            raise ValueError("output_schema must describe a JSON object (\"type\": \"object\"); "
                             "pass Contract.model_json_schema() of a pydantic model")
        return schema


class ModelAnswer(Model):
    """Result of ``call_model``: the validated structured answer and what it cost."""

    output: dict[str, Any]
    usage: Usage
    model: str
    request_id: str | None = None
    repairs: int = 0
    """How many times the model was sent back to fix an invalid answer."""
    exchange_id: str
    """Stable id of this exchange (a digest of its first request); the same in a replay."""
    replayed: bool = False
    """True when the answer came from a recording, not from the model service."""
    lookups: int = 0
    """Helper tool calls (documentation lookups) answered before the answer, a round each."""


class Spend(Model):
    """What one agent activity spent: its role, model, calls, tokens and dollars."""

    role: str
    model: str = ""
    calls: int = 0
    """Requests sent (or replayed), repair rounds included."""
    usage: Usage = Field(default_factory=Usage)
    exchange_ids: list[str] = Field(default_factory=list[str])
    repairs: int = 0
    replayed: bool = False


class ModelSpend(Model):
    """Model use summed over a task or a run: calls, usage, and usage per role."""

    calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    by_role: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    calls_by_role: dict[str, int] = Field(default_factory=dict[str, int])

    def add(self, spend: Spend) -> ModelSpend:
        """This total with one activity's spend added."""
        return self.merge(ModelSpend(calls=spend.calls, usage=spend.usage,
                                     by_role={spend.role: spend.usage},
                                     calls_by_role={spend.role: spend.calls}))

    def merge(self, other: ModelSpend) -> ModelSpend:
        """The sum of two totals (a run's plus one task's)."""
        by_role = dict(self.by_role)
        calls = dict(self.calls_by_role)
        for role, usage in other.by_role.items():
            by_role[role] = by_role[role] + usage if role in by_role else usage
        for role, n in other.calls_by_role.items():
            calls[role] = calls.get(role, 0) + n
        return ModelSpend(calls=self.calls + other.calls, usage=self.usage + other.usage,
                          by_role=by_role, calls_by_role=calls)
