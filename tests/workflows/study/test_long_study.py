"""A long study keeps every execution's history small and about the same size: it continues
as new after each cycle, carrying only its compact state."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.workflows.study.long import run_long_study

CYCLES = 12
HISTORY_BOUND = 400_000
"""Bytes one execution's history may take (Temporal's limit is 50 MB; a payload's 2 MB)."""


async def test_a_long_study_keeps_each_executions_history_small_and_flat(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    long = await run_long_study(own_time_env, tmp_path, CYCLES)
    assert long.cycles == CYCLES and long.reason == f"cycle limit reached: {CYCLES} of " \
                                                    f"{CYCLES} cycles run"
    assert len(long.executions) == CYCLES  # one cycle per execution
    sizes = [e.bytes for e in long.executions]
    assert max(sizes) < HISTORY_BOUND, sizes
    # the state grows a little with each cycle's summary; the history does not balloon
    assert sizes[-1] < 1.5 * sizes[1], sizes
    assert max(e.events for e in long.executions) < 80
