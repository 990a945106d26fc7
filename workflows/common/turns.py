"""Cutting a workflow's long deterministic work into activations of its own.

Temporal's deadlock detector fails a workflow activation that has not yielded in 2 seconds,
and on a busy worker whose process holds thousands of results a garbage collection alone can
take one. So a large run does its long work in parts (the chunks of its packed plan, the parts
of a batch's results as the batch dumps them and as the run decodes them, thousands of
unstarted tasks ended by a cancel) and passes the turn between two: :func:`next_turn` ends
the activation and the work goes on in the next.

The turn was first a 1 ms timer (:data:`STEP`), but a server fires a timer on its next
second at the earliest: a 10 000-task run spent some 11 s a batch waiting on its timers,
a third of its time. Code under patch ``quick-turns`` passes it with a local activity that
does nothing (``pass_turn``): its answer comes back in a new activation of the same workflow
task, some milliseconds later, with no trip through the server.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import PASS_TURN
    from workflows.patches import QUICK_TURNS_PATCH

STEP = timedelta(milliseconds=1)
"""The timer that passed the turn before patch ``quick-turns`` (histories begun before it)."""


async def next_turn() -> None:
    """End this activation; the workflow goes on in the next one."""
    if workflow.patched(QUICK_TURNS_PATCH):
        await PASS_TURN.run(None)
    else:
        await workflow.sleep(STEP)
