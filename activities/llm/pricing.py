"""What a model call costs: list prices per model family, in dollars per million tokens.

Prices change; this table is a best-effort account for budgets and reports, not a bill.
A model the table does not know costs 0 here and is named in ``Usage.unpriced_models``, so
a report can say its cost is missing instead of silently under-counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activities.llm.output import as_object
from workflows.contracts.spend import Usage

MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """List price of one model family, per million tokens.

    Cache writes (5-minute) cost ``cache_write`` times the input price and cache reads
    ``cache_read`` times it. A family priced by prompt length charges every token of a
    request ``long_prompt_factor`` times more once its prompt (input, cache writes and cache
    reads) exceeds ``long_prompt_tokens``.
    """

    input: float
    output: float
    cache_write: float = 1.25
    cache_read: float = 0.1
    long_prompt_tokens: int | None = None
    long_prompt_factor: float = 1.0


# Longest matching prefix wins, so a dated id ("claude-sonnet-4-5-20250929") or a newer
# point release of a priced family finds its family.
PRICES: dict[str, Price] = {
    "claude-fable-5-1": Price(10.0, 50.0, cache_read=0.025),
    "claude-mythos-5-1": Price(10.0, 50.0, cache_read=0.025),
    "claude-fable-5": Price(10.0, 50.0),
    "claude-mythos-5": Price(10.0, 50.0),
    "claude-opus-5-5": Price(4.0, 20.0),
    "claude-opus-5": Price(5.0, 25.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-7": Price(5.0, 25.0),
    "claude-opus-4-8": Price(5.0, 25.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-5-5": Price(2.0, 10.0, cache_read=0.05),
    "claude-sonnet-5": Price(2.0, 10.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-5-5": Price(0.1, 0.5, long_prompt_tokens=100_000, long_prompt_factor=5.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
}


def price_of(model: str) -> Price | None:
    """The price of ``model``'s family, or None if the table does not know it."""
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def priced(model: str, input_tokens: int, output_tokens: int, cache_creation_input_tokens: int,
           cache_read_input_tokens: int) -> Usage:
    """Usage of one response with its cost filled in from the price table."""
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens,
                  cache_creation_input_tokens=cache_creation_input_tokens,
                  cache_read_input_tokens=cache_read_input_tokens)
    price = price_of(model)
    if price is None:
        return usage.model_copy(update={"unpriced_models": [model]})
    cost = (input_tokens * price.input + output_tokens * price.output
            + cache_creation_input_tokens * price.input * price.cache_write
            + cache_read_input_tokens * price.input * price.cache_read) / MILLION
    prompt = input_tokens + cache_creation_input_tokens + cache_read_input_tokens
    if price.long_prompt_tokens is not None and prompt > price.long_prompt_tokens:
        cost *= price.long_prompt_factor
    return usage.model_copy(update={"cost_usd": cost})


def usage_of(response: dict[str, Any], model: str) -> Usage:
    """Tokens from a response's usage block, priced for the model that answered.

    Args:
        response: a Messages API response body.
        model: the model asked, used when the response does not name the one that answered.
    """
    counts = as_object(response.get("usage")) or {}

    def tokens(name: str) -> int:
        value = counts.get(name)
        return value if isinstance(value, int) else 0

    answered = response.get("model")
    return priced(answered if isinstance(answered, str) else model, tokens("input_tokens"),
                  tokens("output_tokens"), tokens("cache_creation_input_tokens"),
                  tokens("cache_read_input_tokens"))
