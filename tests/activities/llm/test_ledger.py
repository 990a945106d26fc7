"""The run budget ledger on real PostgreSQL, through the gateway and the scripted model server.

Ten calls of one run at once against a cap that holds about four: the ledger grants what
fits, refuses the rest before they reach the server, and the run's spend stays within its
cap. Reservations are idempotent by key, and one left by a dead call is given back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import pytest
from pydantic import SecretStr
from sqlalchemy import text
from temporalio.exceptions import ApplicationError

from activities.llm.gateway import ModelGateway
from activities.llm.ledger import BudgetLedger, BudgetRefused, Claim
from tests.activities.llm.test_models import GOOD, KEY, MODEL, ask
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, usage
from workflows.contracts.errors import ErrorType
from workflows.contracts.spend import Budget, Usage

pytestmark = pytest.mark.integration
CAP = 3000
PER_CALL = usage(input_tokens=100, output_tokens=512)
"""Each answer spends 612 tokens: a cap of 3000 pays for four of them."""


@pytest.fixture
async def ledger(fresh_database_url: str) -> AsyncIterator[BudgetLedger]:
    async with BudgetLedger(fresh_database_url) as opened:
        yield opened


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        server.route(lambda body: ToolUse(GOOD, usage=PER_CALL))
        yield server


async def ten_at_once(gateway: ModelGateway) -> list[ApplicationError | None]:
    budget = Budget(max_tokens=CAP)
    calls = [gateway.ask(ask(run_id="run-10", task_id=f"t{n}", budget=budget,
                             messages=[{"role": "user", "content": f"Review job {n}."}]))
             for n in range(10)]
    answers = await asyncio.gather(*calls, return_exceptions=True)
    for answer in answers:
        if isinstance(answer, BaseException) and not isinstance(answer, ApplicationError):
            raise answer
    return [a if isinstance(a, ApplicationError) else None for a in answers]


async def test_ten_parallel_calls_stay_within_the_cap_and_the_rest_are_refused(
        ledger: BudgetLedger, fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL}, ledger=ledger)
    try:
        outcomes = await ten_at_once(gateway)
    finally:
        await gateway.aclose()
    refused = [e for e in outcomes if e is not None]
    granted = len(outcomes) - len(refused)
    assert refused and all(e.type == ErrorType.BUDGET_EXHAUSTED and e.non_retryable
                           and "budget ledger refused" in str(e) for e in refused)
    assert "token budget of 3000" in str(refused[0])
    assert len(fake.requests) == granted  # a refused call never reached the server
    standing = await ledger.standing("run-10")
    assert standing is not None
    assert standing.spent_tokens == granted * 612 <= CAP
    assert standing.reserved_tokens == 0
    assert standing.reservations == {"settled": granted}


async def test_without_the_ledger_the_same_ten_calls_overshoot_the_cap(
        fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    try:
        outcomes = await ten_at_once(gateway)
    finally:
        await gateway.aclose()
    assert outcomes == [None] * 10
    assert len(fake.requests) * 612 > CAP


def claim(key: str, *, tokens: int = 1000, attempt: int = 1, call: str = "wf/run/1",
          ttl: timedelta = timedelta(minutes=5)) -> Claim:
    return Claim(run_id="run-1", key=key, call_key=call, attempt=attempt, tokens=tokens,
                 usd=0.01, ttl=ttl)


async def test_reserve_and_settle_are_idempotent_by_key(ledger: BudgetLedger) -> None:
    caps = Budget(max_tokens=1500)
    await ledger.reserve(claim("a"), caps)
    await ledger.reserve(claim("a"), caps)  # the same call again: still one reservation
    with pytest.raises(BudgetRefused, match="1000 reserved by calls in flight, 1000 asked"):
        await ledger.reserve(claim("b", call="wf/run/2"), caps)
    await ledger.settle("a", Usage(input_tokens=300, output_tokens=100, cost_usd=0.002))
    await ledger.settle("a", Usage(input_tokens=300, output_tokens=100, cost_usd=0.002))
    standing = await ledger.standing("run-1")
    assert standing is not None
    assert (standing.spent_tokens, standing.reserved_tokens) == (400, 0)
    assert standing.spent_usd == pytest.approx(0.002)
    await ledger.reserve(claim("b", call="wf/run/2"), caps)  # 400 + 1000 fits now


async def test_a_dead_calls_reservation_is_released_by_its_next_attempt_or_by_expiry(
        ledger: BudgetLedger) -> None:
    caps = Budget(max_tokens=2500)
    await ledger.reserve(claim("a1", attempt=1), caps)
    await ledger.reserve(claim("x", call="wf/run/9", ttl=timedelta(seconds=-1)), caps)
    # attempt 2 of activity 1 releases attempt 1's; the expired one is given back as well
    await ledger.reserve(claim("a2", attempt=2, tokens=2000), caps)
    standing = await ledger.standing("run-1")
    assert standing is not None
    assert standing.reserved_tokens == 2000
    assert standing.reservations == {"reserved": 1, "released": 2}
    await ledger.release("a2")
    await ledger.release("a2")
    again = await ledger.standing("run-1")
    assert again is not None and again.reserved_tokens == 0


async def test_a_released_call_that_did_spend_is_still_charged(ledger: BudgetLedger) -> None:
    await ledger.reserve(claim("late", ttl=timedelta(seconds=-1)), Budget(max_tokens=5000))
    await ledger.reserve(claim("other", call="wf/run/3"), Budget(max_tokens=5000))
    await ledger.settle("late", Usage(input_tokens=700))  # expired, yet its call answered
    standing = await ledger.standing("run-1")
    assert standing is not None
    assert (standing.spent_tokens, standing.reserved_tokens) == (700, 1000)
    async with ledger.engine.connect() as conn:
        state = (await conn.execute(text(
            "SELECT state FROM budget_reservations WHERE key = 'late'"))).scalar_one()
    assert state == "settled"
