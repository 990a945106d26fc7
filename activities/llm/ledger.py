"""The run's budget ledger: every model call reserves before it starts and settles after.

Tasks of a run call models in parallel, each from a budget copied when it started, so
without a shared account they overshoot together. The ledger is that account, in
PostgreSQL: one row per run with its caps, what settled calls spent and what calls in flight
have reserved. A reservation is granted by one conditional ``UPDATE`` (spent + reserved +
this call's estimate within every cap), so concurrent calls of a run, on any worker, cannot
all pass; a run's spend exceeds its cap only by what calls in flight spend beyond their
reservations (see :mod:`activities.llm.reserve` for why that is rare).

Every operation is idempotent by the reservation's key (workflow, run, activity id, attempt,
round): a repeated reserve finds its row, a repeated settle or release changes nothing.
A call that died leaves a reservation that is released when it expires (its activity's
start-to-close timeout) or when a later attempt of the same activity reserves.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.llm.schema import RELEASED, RESERVED, SETTLED
from database.engine import Database, DatabaseUnavailable
from workflows.contracts.spend import Budget, Usage


class BudgetLedgerUnavailable(DatabaseUnavailable):
    """The ledger's database cannot be reached or prepared."""


class BudgetRefused(Exception):  # the caller turns it into a non-retryable activity error
    """The ledger refused a reservation: the message says which cap and what stands."""


@dataclass(frozen=True)
class Claim:
    """One call's reservation request.

    Attributes:
        run_id: the run whose budget pays.
        key: the reservation's own key (one per call round).
        call_key: the activity the call runs in; a later attempt releases earlier ones.
        attempt: the activity's attempt number.
        tokens: the most this call may spend in tokens (prompt estimate + ``max_tokens``).
        usd: the same priced (0 for a model with no known price).
        ttl: how long the reservation holds if never settled.
    """

    run_id: str
    key: str
    call_key: str
    attempt: int
    tokens: int
    usd: float
    ttl: timedelta


@dataclass(frozen=True)
class Standing:
    """A run's ledger as it stands: caps, settled spend and what is still reserved."""

    cap_tokens: int | None
    cap_usd: float | None
    spent_tokens: int
    spent_usd: float
    reserved_tokens: int
    reserved_usd: float
    reservations: dict[str, int]
    """How many reservations are in each state."""


_RELEASE_DEAD = text("""
    WITH dead AS (
        UPDATE budget_reservations SET state = :released
        WHERE run_id = :run AND state = :reserved
          AND (expires_at < :now OR (call_key = :call AND attempt < :attempt))
        RETURNING tokens, usd)
    UPDATE budget_ledgers SET
        reserved_tokens = reserved_tokens - (SELECT coalesce(sum(tokens), 0) FROM dead),
        reserved_usd = greatest(0, reserved_usd - (SELECT coalesce(sum(usd), 0) FROM dead))
    WHERE run_id = :run""")
_GRANT = text("""
    UPDATE budget_ledgers SET reserved_tokens = reserved_tokens + :tokens,
                              reserved_usd = reserved_usd + :usd, updated_at = :now
    WHERE run_id = :run
      AND (cap_tokens IS NULL OR spent_tokens + reserved_tokens + :tokens <= cap_tokens)
      AND (cap_usd IS NULL OR spent_usd + reserved_usd + :usd <= cap_usd)
    RETURNING run_id""")


class BudgetLedger(Database):
    """Reservations against each run's model budget, in PostgreSQL.

    It opens on its first use, so an agents worker whose runs set no budget never
    connects (and one without a database serves them).
    """

    what: ClassVar[str] = "budget ledger"
    unavailable: ClassVar[type[DatabaseUnavailable]] = BudgetLedgerUnavailable

    def __init__(self, database_url: str) -> None:
        super().__init__(database_url)
        self._opening = asyncio.Lock()

    async def ready(self) -> None:
        """Open the ledger unless it is open (at most once, however many calls ask)."""
        async with self._opening:
            if self._engine is None:
                await self.open()

    async def reserve(self, claim: Claim, caps: Budget) -> None:
        """Reserve ``claim`` against its run's caps, or refuse.

        The run's row is made on its first call with ``caps``; a reservation already made
        under ``claim.key`` is kept as it is.

        Raises:
            BudgetRefused: spent + reserved + this claim would pass a cap.
        """
        await self.ready()
        now = datetime.now(UTC)
        params: dict[str, Any] = {
            "run": claim.run_id, "key": claim.key, "call": claim.call_key,
            "attempt": claim.attempt, "tokens": claim.tokens, "usd": claim.usd, "now": now,
            "expires": now + claim.ttl, "reserved": RESERVED, "released": RELEASED,
            "cap_tokens": caps.max_tokens, "cap_usd": caps.max_cost_usd}
        async with self.engine.begin() as conn:
            await conn.execute(text("""
                INSERT INTO budget_ledgers VALUES (:run, :cap_tokens, :cap_usd, 0, 0, 0, 0, :now)
                ON CONFLICT (run_id) DO NOTHING"""), params)
            known = await conn.execute(
                text("SELECT 1 FROM budget_reservations WHERE key = :key"), params)
            if known.first() is not None:
                return
            await conn.execute(_RELEASE_DEAD, params)
            if (await conn.execute(_GRANT, params)).first() is None:
                raise BudgetRefused(await _refusal(conn, claim))
            await conn.execute(text("""
                INSERT INTO budget_reservations VALUES (:key, :run, :call, :attempt, :tokens,
                    :usd, :reserved, NULL, NULL, :now, :expires)"""), params)

    async def settle(self, key: str, usage: Usage) -> None:
        """Replace the reservation ``key`` by what its call really spent (once)."""
        await self.ready()
        async with self.engine.begin() as conn:
            row = (await conn.execute(text(
                "SELECT run_id, state, tokens, usd FROM budget_reservations WHERE key = :key "
                "FOR UPDATE"), {"key": key})).first()
            if row is None or row.state == SETTLED:
                return
            held = row.state == RESERVED
            await conn.execute(text("""
                UPDATE budget_ledgers SET
                    spent_tokens = spent_tokens + :actual_tokens,
                    spent_usd = spent_usd + :actual_usd,
                    reserved_tokens = reserved_tokens - :tokens,
                    reserved_usd = greatest(0, reserved_usd - :usd), updated_at = :now
                WHERE run_id = :run"""), {
                    "actual_tokens": usage.total_tokens, "actual_usd": usage.cost_usd,
                    "tokens": row.tokens if held else 0, "usd": row.usd if held else 0.0,
                    "now": datetime.now(UTC), "run": row.run_id})
            await conn.execute(text("""
                UPDATE budget_reservations SET state = :settled, actual_tokens = :tokens,
                    actual_usd = :usd WHERE key = :key"""), {
                    "settled": SETTLED, "tokens": usage.total_tokens, "usd": usage.cost_usd,
                    "key": key})

    async def release(self, key: str) -> None:
        """Give back the reservation ``key`` of a call that spent nothing (once)."""
        await self.ready()
        async with self.engine.begin() as conn:
            row = (await conn.execute(text(
                "UPDATE budget_reservations SET state = :released "
                "WHERE key = :key AND state = :reserved RETURNING run_id, tokens, usd"),
                {"key": key, "released": RELEASED, "reserved": RESERVED})).first()
            if row is None:
                return
            await conn.execute(text("""
                UPDATE budget_ledgers SET reserved_tokens = reserved_tokens - :tokens,
                    reserved_usd = greatest(0, reserved_usd - :usd), updated_at = :now
                WHERE run_id = :run"""), {"tokens": row.tokens, "usd": row.usd,
                                          "now": datetime.now(UTC), "run": row.run_id})

    async def standing(self, run_id: str) -> Standing | None:
        """The run's ledger, or None if no call of the run has reserved yet."""
        await self.ready()
        async with self.engine.connect() as conn:
            row = (await conn.execute(text("SELECT * FROM budget_ledgers WHERE run_id = :run"),
                                      {"run": run_id})).first()
            if row is None:
                return None
            counts = await conn.execute(text(
                "SELECT state, count(*) FROM budget_reservations WHERE run_id = :run "
                "GROUP BY state"), {"run": run_id})
            return Standing(cap_tokens=row.cap_tokens, cap_usd=row.cap_usd,
                            spent_tokens=row.spent_tokens, spent_usd=row.spent_usd,
                            reserved_tokens=row.reserved_tokens,
                            reserved_usd=row.reserved_usd,
                            reservations={str(s): int(n) for s, n in counts.all()})


async def _refusal(conn: AsyncConnection, claim: Claim) -> str:
    """Why ``claim`` was refused: the cap it would pass and what the run stands at."""
    row = (await conn.execute(text("SELECT * FROM budget_ledgers WHERE run_id = :run"),
                              {"run": claim.run_id})).one()
    if row.cap_tokens is not None and (row.spent_tokens + row.reserved_tokens + claim.tokens
                                       > row.cap_tokens):
        return (f"the run's token budget of {row.cap_tokens} cannot hold this call: "
                f"{row.spent_tokens} spent, {row.reserved_tokens} reserved by calls in "
                f"flight, {claim.tokens} asked")
    return (f"the run's cost budget of ${row.cap_usd:.4f} cannot hold this call: "
            f"${row.spent_usd:.4f} spent, ${row.reserved_usd:.4f} reserved by calls in "
            f"flight, ${claim.usd:.4f} asked")
