"""A run's history under a sweep of twenty branches: bounded, and linear in the branches.

Each branch is a child workflow with a history of its own, so the run's history should grow by
a fixed amount per branch (its start, its result and a few event records), never by the number
of branches squared. Measured from the histories the time-skipping server kept.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.research.sweeps import (
    HISTORY_LIMIT_BYTES,
    HISTORY_LIMIT_EVENTS,
    PAYLOAD_LIMIT_BYTES,
    sweep,
)

RUN_BYTES_AT_20 = 1_000_000
"""A 20-branch run's history stays under 1 MB (2 % of Temporal's 50 MB)..."""
RUN_EVENTS_AT_20 = 500
"""...and 500 events (1 % of Temporal's 51 200)."""
LARGEST_EVENT = 64 * 1024
"""No event of the run or of a branch comes near Temporal's 2 MiB payload limit."""
BRANCH_BYTES = 100_000
"""A branch's own history (one task and its downstream) stays small whatever its siblings."""
GROWTH = 1.5
"""How much more the second ten branches may add than the first ten (quadratic growth: 3x)."""


async def test_a_twenty_branch_sweep_keeps_the_run_history_small_and_linear(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    none, ten, twenty = [await sweep(time_env, f"{task_queue}-{n}", tmp_path / str(n), n)
                         for n in (0, 10, 20)]
    assert [s.status for s in (none, ten, twenty)] == ["completed"] * 3

    assert twenty.run.bytes < RUN_BYTES_AT_20 < HISTORY_LIMIT_BYTES, twenty
    assert twenty.run.events < RUN_EVENTS_AT_20 < HISTORY_LIMIT_EVENTS, twenty
    assert twenty.largest_branch is not None and ten.largest_branch is not None
    assert twenty.largest_branch.bytes < BRANCH_BYTES, twenty.largest_branch
    assert max(twenty.run.largest_event, twenty.largest_branch.largest_event) < LARGEST_EVENT \
        < PAYLOAD_LIMIT_BYTES

    first_bytes, second_bytes = ten.run.bytes - none.run.bytes, twenty.run.bytes - ten.run.bytes
    first_events, second_events = ten.run.events - none.run.events, \
        twenty.run.events - ten.run.events
    assert first_bytes > 0 and second_bytes < GROWTH * first_bytes, (none, ten, twenty)
    assert first_events > 0 and second_events < GROWTH * first_events, (none, ten, twenty)
    # a branch's history does not grow with its siblings
    assert twenty.largest_branch.bytes < GROWTH * ten.largest_branch.bytes
