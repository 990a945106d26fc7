"""Following a run across a lost Temporal: ``--wait`` reconnects, bounded, and says so.

A Temporal server killed and restarted (its state in a SQLite file or a database) comes back
with every run where it was; the client's next call reconnects. ``--wait`` keeps waiting for
the run's result through such a gap, :data:`RECONNECT_TRIES` times at most, and then exits by
the run's own outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from client.assay import AssayClient
    from workflows.contracts.results import ResearchResult

RECONNECT_TRIES = 90
"""How many times ``--wait`` tries Temporal again once it is lost (a server restarting)."""
RECONNECT_EVERY_S = 2.0


def _clock() -> str:
    return datetime.now(UTC).strftime("%H:%M:%S")


def lost_connection(err: BaseException) -> bool:
    """Whether ``err`` says Temporal cannot be reached now (down, or restarting)."""
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(err, RPCError):
        return err.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.UNKNOWN,
                              RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED)
    text = str(err).lower()
    return isinstance(err, RuntimeError) and ("transport" in text or "connect" in text)


async def await_result(client: AssayClient, run_id: str,
                       say: Callable[[str], None]) -> ResearchResult:
    """The run's result; a lost Temporal is tried again, :data:`RECONNECT_TRIES` times.

    Once Temporal answers again the count starts over, so a server that restarts more than
    once is followed too (as many restarts as tries, at most); the run's own outcome decides
    how ``--wait`` exits.
    """
    lost = restarts = 0
    while True:
        try:
            return await client.result(run_id)
        except Exception as err:
            if not lost_connection(err) or lost >= RECONNECT_TRIES or restarts >= RECONNECT_TRIES:
                raise
            if lost == 0:
                say(f"{_clock()}  lost Temporal ({err}); reconnecting every "
                    f"{RECONNECT_EVERY_S:g} s, {RECONNECT_TRIES} times at most")
            lost += 1
        await asyncio.sleep(RECONNECT_EVERY_S)
        with contextlib.suppress(Exception):
            await client.status(run_id)
            say(f"{_clock()}  reconnected to Temporal; following run {run_id}")
            lost, restarts = 0, restarts + 1
