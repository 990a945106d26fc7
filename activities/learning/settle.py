"""Wait, bounded, until the learner has learned from given tasks.

Learning runs after a task ends, so a person (or a study) who starts the next run at once may
start it before memory has the last one's episodes. Whoever needs what was learned asks here
first: the library's ``unlearned`` query names the tasks it took in and has not yet learned
from; this polls it until none is left or the limit passes. A library that is not running,
or a task it never took in (learning off, a task that never ran), is not waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import timedelta

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from workflows.contracts.skills import library_id

POLL_S = 0.05
"""Seconds between two questions to the library."""


async def wait_learned(client: Client, skills_queue: str, keys: Sequence[str], *,
                       limit_s: float = 30.0) -> list[str]:
    """Wait until the library has learned from ``keys`` (``run_id/task_id``).

    Returns:
        The keys still not learned from when ``limit_s`` passed (empty when all were).
    """
    handle = client.get_workflow_handle(library_id(skills_queue))
    deadline = time.monotonic() + limit_s
    pending = list(keys)
    while pending and time.monotonic() < deadline:
        try:
            pending = await handle.query("unlearned", pending, result_type=list[str],
                                         rpc_timeout=_timeout(deadline))
        except RPCError as err:  # a library between two executions may answer late: ask again
            if err.status is RPCStatusCode.NOT_FOUND:
                return []
        if pending:
            await asyncio.sleep(POLL_S)
    return pending


def _timeout(deadline: float) -> timedelta:
    return timedelta(seconds=max(1.0, deadline - time.monotonic()))
