"""A long study on the Harness: how big its histories grow and how long each cycle takes.

Each cycle proposes one hypothesis and supports it (a fake job's ``score`` of 0.9 against a
threshold of 0.8), so every cycle makes progress and the study runs to its cycle limit.
Every execution's history is read along the continue-as-new chain. Shared by the history
bound test (``test_long_study``) and ``make bench``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from tests.workflows.study.test_study_workflow import Study, cycle_plan


@dataclass
class Execution:
    """One execution of the study (one cycle): its history's size and how long it took."""

    events: int
    bytes: int
    seconds: float


@dataclass
class LongStudy:
    """What a long study measured."""

    cycles: int
    reason: str
    executions: list[Execution]
    state_bytes: int


async def run_long_study(env: WorkflowEnvironment, root: Path, cycles: int) -> LongStudy:
    """Run a study of ``cycles`` cycles and measure each of its executions."""
    study = Study(env, "long-study", root)
    plans = [cycle_plan(n, 0.9, f"H{n}", {"id": f"H{n}", "statement": f"claim {n}", "test": {
        "metric": "score", "op": ">", "threshold": 0.8}}) for n in range(1, cycles + 1)]
    inp = study.input(plans, max_cycles=cycles)
    async with study.harness.worker():
        result = await (await study.start(inp)).result()
    executions: list[Execution] = []
    run_id: str | None = study.first_run
    while run_id:
        history = await env.client.get_workflow_handle(
            inp.state.study_id, run_id=run_id).fetch_history()
        times: list[datetime] = [e.event_time.ToDatetime() for e in history.events]
        executions.append(Execution(events=len(history.events),
                                    bytes=len(history.to_json().encode()),
                                    seconds=(times[-1] - times[0]).total_seconds()))
        last = history.events[-1]
        run_id = (last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
                  if last.event_type
                  == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW else None)
    final = study.reports.written[-1].state
    return LongStudy(cycles=result.cycles, reason=result.reason, executions=executions,
                     state_bytes=len(final.model_dump_json().encode()))
