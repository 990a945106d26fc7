"""``close_cycle``: a study's state after one cycle, from the cycle's report.

The run's results JSON holds every task's verified metrics, checks and the plan with its
hypotheses; a report that cannot be read on this host (another machine's disk, a run that
wrote none) is replaced by the run's own result, which has each task's status and reason:
its hypotheses are then judged ``inconclusive`` and its tasks carried forward, never lost.
A cycle whose plan contradicts the study's hypothesis tree is refused with a clear,
non-retryable error.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from workflows.catalogue import CLOSE_CYCLE
from workflows.common.errors import ErrorType
from workflows.contracts.cycles import CloseCycleInput
from workflows.contracts.results import ResearchResult, RunReport, outline_report
from workflows.contracts.study import StudyState
from workflows.study.carry import close_cycle as close


def cycle_report(result: ResearchResult) -> RunReport:
    """The cycle's report as its results JSON has it, else as its result says."""
    if result.report is not None:
        try:
            text = Path(result.report.results_json).read_text(encoding="utf-8")
            return RunReport.model_validate_json(text)
        except (OSError, ValidationError):
            pass
    return outline_report(result)


@CLOSE_CYCLE.defn
async def close_cycle(req: CloseCycleInput) -> StudyState:
    """Judge the cycle's hypotheses, decide by the rules and record the cycle."""
    report = await asyncio.to_thread(cycle_report, req.result)
    if report.plan is None:
        report = report.model_copy(update={"plan": req.plan})
    try:
        state = close(req.state, report)
    except ValueError as err:
        raise ApplicationError(f"cycle {req.state.cycles + 1} ({req.result.run_id}): {err}",
                               type=ErrorType.INVALID_PLAN, non_retryable=True) from err
    paths = req.result.report
    latest = state.summaries[-1].model_copy(
        update={"results_json": paths.results_json if paths else ""})
    return state.model_copy(update={"summaries": [*state.summaries[:-1], latest]})
