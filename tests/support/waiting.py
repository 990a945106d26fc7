"""Waiting with a deadline for something a test cannot be told about: ``wait_for``.

A condition may ask Temporal about a workflow that does not exist yet (a task's child workflow
before its parent started it, a run before its worker took it): that "not found" means "not
yet" and the condition is asked again. Any other error is the test's answer and goes through
as itself: a query that fails, a mistyped name, a decoding error never turn into a timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator

from temporalio.service import RPCError, RPCStatusCode

Condition = Callable[[], bool | Awaitable[bool]]


def not_found(err: BaseException) -> bool:
    """Whether ``err`` says only that what was asked for does not exist (yet).

    Temporal's ``NOT_FOUND``, raised as it is or as the cause of an error of Assay's own (the
    client's ``RunNotFoundError``).
    """
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, RPCError) and seen.status == RPCStatusCode.NOT_FOUND:
            return True
        seen = seen.__cause__
    return False


def _attempts(timeout: float, what: str) -> Iterator[None]:
    """One step per attempt until ``timeout`` seconds pass; then fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        yield
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


async def wait_for(condition: Condition, *, timeout: float, what: str,
                   every: float = 0.1) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds.

    Args:
        condition: A function, plain or async, that says whether the awaited state is reached.
            Raising an error that :func:`not_found` accepts counts as "not yet"; any other
            error fails the test as itself.
        timeout: Seconds before the test fails.
        what: What is awaited, for the failure's message ("the plan gate to open").
        every: Seconds between two attempts.
    """
    for _ in _attempts(timeout, what):
        try:
            value = condition()
            if not isinstance(value, bool):
                value = await value
        except Exception as err:
            if not not_found(err):
                raise
            value = False
        if value:
            return
        await asyncio.sleep(every)


def wait_for_blocking(condition: Callable[[], bool], *, timeout: float, what: str,
                      every: float = 0.05) -> None:
    """``wait_for`` for a test that is no coroutine: sleeps the thread between attempts."""
    for _ in _attempts(timeout, what):
        try:
            if condition():
                return
        except Exception as err:
            if not not_found(err):
                raise
        time.sleep(every)
