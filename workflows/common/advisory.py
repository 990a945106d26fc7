"""Advisory calls: asking a learning pool (reflection, memory, skills) without depending on it.

Learning never holds a run up: each such call is bounded by the run's
``reflection_timeout_s`` over all its attempts, and when the pool is slow, down or wrong the
miss is recorded as an ``agent_call`` event and the caller goes on without an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from temporalio.exceptions import ActivityError

from workflows.catalogue import ActivityDecl
from workflows.common.events import EventLog
from workflows.common.failures import root_message
from workflows.contracts.policy import Queues

InT = TypeVar("InT")
OutT = TypeVar("OutT")


@dataclass(frozen=True)
class Missed:
    """An advisory call that gave no answer, and why."""

    reason: str


async def advise(decl: ActivityDecl[InT, OutT], arg: InT, *, queues: Queues, limit_s: float,
                 log: EventLog, agent: str, summary: str | None = None) -> OutT | Missed:
    """Run ``decl`` within ``limit_s`` seconds in all; a failure becomes a recorded miss.

    The log is flushed first, so the learning pool reads every event recorded so far.
    ``summary`` is what the Web UI shows for the call (see :meth:`ActivityDecl.run`).
    """
    limit = timedelta(seconds=limit_s)
    await log.flush()
    try:
        return await decl.run(arg, queues=queues, schedule_to_close=limit,
                              start_to_close=min(limit, decl.start_to_close), summary=summary)
    except ActivityError as err:
        reason = root_message(err)
        log.add("agent_call", "error", agent=agent, status="missed",
                outputs={"reason": reason})
        return Missed(reason)

