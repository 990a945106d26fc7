"""Studies: a 50-cycle study's histories and per-cycle time, and the planner's context size.

The study runs on a time-skipping server of its own with the workflow tests' Harness (the
fake sandbox; real workflows, real ``close_cycle``): each cycle supports one new hypothesis,
so the study runs to its limit, continuing as new after every cycle
(``tests.workflows.study.long``). The planner's study section is measured for a context of
two 20-task cycles and eight hypotheses against its byte budget.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.agents.studies import STUDY_CONTEXT_BYTES, study_section
from client.assay import DATA_CONVERTER
from tests.activities.agents.test_study_prompt import large_context
from tests.conftest import binary, register_search_attributes
from tests.workflows.study.factories import hypothesis, outcome, summary, tree
from tests.workflows.study.long import run_long_study
from tests.workflows.study.test_state_size import cycle_report
from workflows.contracts.study import STATE_BYTES, CycleDecision, StudyContext, StudyState
from workflows.study.carry import close_cycle

CYCLES = 50
HISTORY_LIMIT = 2_000_000
"""The bar: the longest history of a 50-cycle study stays under 2 MB."""


async def run() -> None:
    """Print the long study's figures and the context size."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    try:
        with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
            start = time.perf_counter()
            long = await run_long_study(env, Path(tmp), CYCLES)
            took = time.perf_counter() - start
    finally:
        await env.shutdown()
    sizes = [e.bytes for e in long.executions]
    seconds = [e.seconds for e in long.executions]
    first, last = seconds[:10], seconds[-10:]
    print(f"   a. a {long.cycles}-cycle study ({len(long.executions)} executions, one per cycle;"
          f" {took:.1f} s in all): {long.reason}")
    print(f"      longest history {max(sizes):,} bytes ({max(e.events for e in long.executions)}"
          f" events) vs the {HISTORY_LIMIT:,}-byte bar: {max(sizes) / HISTORY_LIMIT:.1%}")
    print(f"      history of cycle 1 / 25 / 50: {sizes[0]:,} / {sizes[24]:,} / {sizes[-1]:,} "
          f"bytes; state carried at the end {long.state_bytes:,} bytes")
    print(f"      time per cycle, median of cycles 1-10 vs 41-50: "
          f"{statistics.median(first) * 1000:.0f} ms vs {statistics.median(last) * 1000:.0f} ms"
          f" (ratio {statistics.median(last) / statistics.median(first):.2f})")
    context = twenty_task_context()
    text = study_section(context)
    print(f"   b. planner context for a study with two 20-task cycles and 8 hypotheses: "
          f"{len(text.encode()):,} bytes rendered (JSON {len(context.model_dump_json()):,}) "
          f"against the {STUDY_CONTEXT_BYTES:,}-byte budget")
    largest = large_context()
    start = time.perf_counter()
    cut = study_section(largest)
    print(f"      the largest context ({len(largest.model_dump_json()):,} bytes as JSON) is cut "
          f"to {len(cut.encode()):,} bytes in {(time.perf_counter() - start) * 1000:.1f} ms")
    state = StudyState(study_id="bench", goal="does age predict survival?")
    for cycle in range(1, CYCLES + 1):
        state = close_cycle(state, cycle_report(cycle))
    print(f"   c. a study's state after {CYCLES} cycles of 20 tasks (two new hypotheses each): "
          f"{len(state.model_dump_json().encode()):,} bytes (the continue-as-new payload; "
          f"bound at its largest {STATE_BYTES:,})")


def twenty_task_context() -> StudyContext:
    """Where a study stands after two cycles of 20 tasks each, with 8 hypotheses."""
    hypotheses = [hypothesis(f"H{i}", parent=None if i < 3 else "H1") for i in range(1, 9)]
    cycles = [summary(c, *(outcome(f"t{i:02d}", hypothesis=f"H{1 + i % 8}", auc=0.5 + i / 100,
                                   loss=1.0 - i / 50) for i in range(20)), key_value=0.7)
              for c in (1, 2)]
    return StudyContext(study_id="bench", cycle=3, tree=tree(*hypotheses), previous=cycles,
                        decision=CycleDecision(action="iterate", reason="H1 supported",
                                               hypotheses=["H1"]))
