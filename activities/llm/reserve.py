"""How much one model call reserves from its run's budget, and under which key.

A call may spend at most its prompt plus ``max_tokens`` of output. The prompt is counted
before it is sent as a conservative estimate (a token per three bytes of the request's JSON,
where English text and code run nearer four), and priced as a cache write, the dearest way
a prompt token is billed, so a reservation is rarely smaller than what the call spends.

The key names the call: its activity (workflow id, workflow run id, activity id), attempt,
exchange and round. A retried attempt reserves anew (and releases the attempt before it);
a repeated reserve of the same round finds the reservation it already made.
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import timedelta
from typing import Any

from temporalio import activity

from activities.llm.ledger import Claim
from activities.llm.pricing import priced
from workflows.contracts.spend import Budget, ModelCall

BYTES_PER_TOKEN = 3
"""Prompt bytes per estimated token: fewer than tokenizers average, so estimates run high."""
UNSETTLED_TTL = timedelta(minutes=10)
"""How long a reservation made outside an activity (or one with no timeout) holds."""
SETTLE_MARGIN = timedelta(minutes=1)
"""Added to the activity's start-to-close timeout before a reservation expires."""


def prompt_tokens(request: dict[str, Any]) -> int:
    """The estimated prompt tokens of a Messages API request (system, messages, tools)."""
    sent = {k: request.get(k) for k in ("system", "messages", "tools", "tool_choice")}
    size = len(json.dumps(sent, ensure_ascii=False).encode())
    return math.ceil(size / BYTES_PER_TOKEN)


def claim_for(call: ModelCall, request: dict[str, Any], exchange_id: str,
              repairs: int) -> Claim | None:
    """The reservation one round of ``call`` makes; None when its run has no budget cap."""
    budget: Budget | None = call.budget
    if budget is None or (budget.max_tokens is None and budget.max_cost_usd is None):
        return None
    prompt = prompt_tokens(request)
    output = int(request.get("max_tokens") or call.max_tokens)
    cost = priced(str(request.get("model") or ""), 0, output, prompt, 0).cost_usd
    call_key, attempt, ttl = _activity_key()
    return Claim(run_id=call.run_id, key=f"{call_key}/{attempt}/{exchange_id}/{repairs}",
                 call_key=call_key, attempt=attempt, tokens=prompt + output, usd=cost,
                 ttl=ttl)


def _activity_key() -> tuple[str, int, timedelta]:
    """The current activity's key, attempt and reservation lifetime."""
    if not activity.in_activity():
        return uuid.uuid4().hex, 1, UNSETTLED_TTL
    info = activity.info()
    timeout = info.start_to_close_timeout or info.schedule_to_close_timeout
    ttl = timeout + SETTLE_MARGIN if timeout else UNSETTLED_TTL
    return f"{info.workflow_id}/{info.workflow_run_id}/{info.activity_id}", info.attempt, ttl
