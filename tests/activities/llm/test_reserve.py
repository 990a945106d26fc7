"""How much a model call reserves from its run's budget: its prompt counted high, its output
at ``max_tokens``, priced as the dearest way those tokens are billed."""

from __future__ import annotations

import json

from activities.llm.pricing import price_of
from activities.llm.request import Conversation
from activities.llm.reserve import BYTES_PER_TOKEN, claim_for, prompt_tokens
from tests.activities.llm.test_models import MODEL, ask
from workflows.contracts.spend import Budget


def test_a_call_without_a_cap_reserves_nothing() -> None:
    call = ask(budget=Budget())
    assert claim_for(call, Conversation(call, MODEL).request(), "x", 0) is None
    assert claim_for(ask(), Conversation(ask(), MODEL).request(), "x", 0) is None


def test_a_reservation_is_the_prompt_counted_high_plus_max_tokens_priced() -> None:
    call = ask(budget=Budget(max_cost_usd=1.0), max_tokens=512)
    request = Conversation(call, MODEL).request()
    claim = claim_for(call, request, "exchange", 1)
    assert claim is not None
    sent = json.dumps({k: request[k] for k in ("system", "messages", "tools", "tool_choice")},
                      ensure_ascii=False)
    prompt = prompt_tokens(request)
    assert prompt * BYTES_PER_TOKEN >= len(sent.encode()) > (prompt - 1) * BYTES_PER_TOKEN
    assert claim.tokens == prompt + 512
    price = price_of(MODEL)
    assert price is not None
    expected = (512 * price.output + prompt * price.input * price.cache_write) / 1_000_000
    assert abs(claim.usd - expected) < 1e-12
    assert claim.run_id == "run-1" and claim.key.endswith("/1/exchange/1")  # attempt 1, round 1


def test_a_longer_prompt_reserves_more() -> None:
    short = ask(budget=Budget(max_tokens=10**6))
    long = ask(budget=Budget(max_tokens=10**6),
               messages=[{"role": "user", "content": "Review job 7. " * 500}])
    claims = [claim_for(c, Conversation(c, MODEL).request(), "x", 0) for c in (short, long)]
    assert claims[0] is not None and claims[1] is not None
    assert claims[1].tokens - claims[0].tokens >= len("Review job 7. " * 499) // BYTES_PER_TOKEN
