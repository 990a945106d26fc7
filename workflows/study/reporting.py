"""Writing a study's report from its workflow: after every cycle, and when it ends.

A report that cannot be written is recorded as an event, never fatal: the study goes on
(or ends) and says so.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import WRITE_STUDY_REPORT
    from workflows.common.events import EventLog
    from workflows.common.failures import root_message
    from workflows.contracts.cycles import StudyReportInput, StudyStatus
    from workflows.contracts.results import ReportPaths
    from workflows.contracts.study import StudyState
    from workflows.contracts.synthesis import StudySynthesis


async def write_study_report(state: StudyState, status: StudyStatus, started: datetime,
                             log: EventLog, reason: str = "", *,
                             synthesis: StudySynthesis | None = None,
                             note: str = "") -> ReportPaths | None:
    """Write the study's report as it stands; None (and an event) if it cannot be written.

    ``synthesis``: the study synthesizer's answer; ``note``: why there is none.
    """
    try:
        return await WRITE_STUDY_REPORT.run(StudyReportInput(
            state=state, status=status, reason=reason, started_at=started,
            finished_at=workflow.now(), synthesis=synthesis, synthesis_note=note[:2000]))
    except (ActivityError, ApplicationError) as err:  # a local activity's own failure
        log.add("checkpoint", "error", status="report_unwritten",
                outputs={"reason": root_message(err)})
        await log.flush()
        return None
