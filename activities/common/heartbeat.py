"""Heartbeating while an activity waits on slow work, so a dead worker is noticed in seconds.

A long activity that stops heartbeating is retried elsewhere once its heartbeat timeout
passes, instead of once its start-to-close timeout does (minutes). Blocking file work (copying,
hashing, reading artifacts back, walking trees) runs in a thread while the event loop
heartbeats: a heartbeat says the worker process lives, which is what the server needs to know.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from temporalio import activity

_P = ParamSpec("_P")
_T = TypeVar("_T")


def beat(**details: Any) -> None:
    """Heartbeat when running as an activity; a no-op when called directly (tests, benches)."""
    if activity.in_activity():
        activity.heartbeat(details)


class Heartbeats:
    """Heartbeats every ``every_s`` seconds while an activity waits.

    Args:
        every_s: the interval; well below the heartbeat timeout the calls set.
    """

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s

    async def in_thread(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run blocking ``fn`` in a thread, heartbeating ``{"phase": <its name>}`` meanwhile."""
        return await self.during(asyncio.to_thread(fn, *args, **kwargs),
                                 phase=getattr(fn, "__name__", "files"))

    async def during(self, work: Awaitable[_T], **details: Any) -> _T:
        """Await ``work``, heartbeating ``details`` meanwhile; cancelled with it."""
        task = asyncio.ensure_future(work)
        try:
            while not task.done():
                await asyncio.wait([task], timeout=self.every_s)
                if not task.done():
                    beat(**details)
        finally:
            task.cancel()  # a no-op once done; stops the work if the activity was cancelled
        return task.result()
