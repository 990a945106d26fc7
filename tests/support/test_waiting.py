"""``wait_for`` asks again while Temporal says "not found", and lets every other error through."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from tests.support.waiting import not_found, wait_for, wait_for_blocking


def missing() -> RPCError:
    return RPCError("workflow not found for ID: r.task-1", RPCStatusCode.NOT_FOUND, b"")


def answers_after(misses: int, error: BaseException,
                  ) -> tuple[list[int], Callable[[], bool]]:
    """A condition that raises ``error`` ``misses`` times, then holds; and its call count."""
    calls: list[int] = []

    def condition() -> bool:
        calls.append(1)
        if len(calls) <= misses:
            raise error
        return True
    return calls, condition


async def test_a_workflow_not_found_yet_is_asked_again_until_it_answers() -> None:
    calls, condition = answers_after(3, missing())
    await wait_for(condition, timeout=5, what="the task's workflow", every=0.01)
    assert len(calls) == 4


class RunMissing(LookupError):
    """An error of a client's own raised from Temporal's "not found" (as ``AssayClient``'s)."""


async def test_an_error_raised_from_a_not_found_counts_as_not_yet() -> None:
    async def condition() -> bool:
        try:
            raise missing()
        except RPCError as err:
            raise RunMissing("no run 'r' on this server") from err

    with pytest.raises(AssertionError, match="timed out after 0 s waiting for the run"):
        await wait_for(condition, timeout=0.05, what="the run", every=0.01)


async def test_a_failing_query_fails_as_itself_at_once_not_as_a_timeout() -> None:
    broken = WorkflowQueryFailedError("Query handler for 'progres' expected but not found")
    calls, condition = answers_after(1, broken)
    with pytest.raises(WorkflowQueryFailedError, match="progres"):
        await wait_for(condition, timeout=30, what="the gate", every=0.01)
    assert len(calls) == 1


@pytest.mark.parametrize("status", [RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE,
                                    RPCStatusCode.INVALID_ARGUMENT])
def test_other_server_errors_are_not_taken_for_not_yet(status: RPCStatusCode) -> None:
    error = RPCError("the server answered otherwise", status, b"")
    assert not not_found(error)
    calls, condition = answers_after(1, error)
    with pytest.raises(RPCError) as raised:
        wait_for_blocking(condition, timeout=30, what="the stack", every=0.01)
    assert raised.value.status == status and len(calls) == 1


def test_the_timeout_names_what_was_awaited() -> None:
    with pytest.raises(AssertionError, match="waiting for the codec server"):
        wait_for_blocking(lambda: False, timeout=0.05, what="the codec server", every=0.01)
