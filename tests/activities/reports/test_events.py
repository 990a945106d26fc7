"""The report's ``timeline.md``: the run's stored events, nested as they happened."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from temporalio.testing import ActivityEnvironment

from activities.events.store import EventStore
from activities.reports.events import read_events
from activities.reports.writer import ReportWriter
from workflows.contracts.execution import EventRecord, RecordEventsInput
from workflows.contracts.results import RunReport, TaskResult, WriteReportInput

START = datetime(2026, 1, 1, 9, 30, tzinfo=UTC)


def event(event_id: str, parent: str | None, node: str, event_type: str, subtype: str,
          order: int, **fields: object) -> EventRecord:
    return EventRecord.model_validate({
        "id": event_id, "run_id": "run-1", "node_id": node, "event_type": event_type,
        "event_subtype": subtype, "timestamp": START, "parent_event_id": parent,
        "execution_order": order, "execution": "x1", **fields})


def report(execution: str = "x1") -> RunReport:
    return RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64, status="completed",
                     timestamp=START.strftime("%Y%m%d_%H%M%S"), started_at=START,
                     finished_at=START, status_reason="completed: 1 completed",
                     execution=execution,
                     tasks=[TaskResult(task_id="a", status="completed", status_reason="ok")])


async def test_timeline_md_nests_task_phase_and_attempt_and_the_summary_links_it(
        tmp_path: Path, fresh_database_url: str) -> None:
    store = EventStore(fresh_database_url)
    await store.open()
    try:
        await store.record_events(RecordEventsInput(events=[
            event("r", None, "run", "checkpoint", "start", 1, inputs={"plan": "p"}),
            event("h", "r", "run", "handoff", "start", 2, inputs={"task_id": "a"}),
            event("t", "h", "a", "checkpoint", "start", 1),
            event("p", "t", "a", "checkpoint", "info", 2, status="execute"),
            event("j", "p", "a", "code_exec", "start", 3, inputs={"filename": "fit.py"}),
            event("d", "j", "a", "code_exec", "complete", 4, status="succeeded"),
            event("o", "gone", "a", "error", "error", 5, status="odd"),
            event("other", None, "run", "checkpoint", "start", 1, execution="x0")]))
        await ActivityEnvironment().run(ReportWriter(tmp_path, events=store).write_report,
                                        WriteReportInput(report=report()))
    finally:
        await store.close()
    text = (tmp_path / "run-1" / "timeline.md").read_text(encoding="utf-8")
    lines = text.split("```text\n")[1].split("\n```")[0].splitlines()
    assert lines == [
        "09:30:00  run         started: p",
        "09:30:00    run         task a started",
        "09:30:00      task a      started",
        "09:30:00        task a      phase execute",
        "09:30:00          task a      job fit.py started",
        "09:30:00            task a      job succeeded",
        "09:30:00  task a      error: assay odd (its parent event is not among these)",
    ]  # the other execution's event is not this report's
    summary = next((tmp_path / "run-1").glob("execution_summary_*.md")).read_text()
    assert "[timeline.md](timeline.md)" in summary


async def test_an_unreadable_store_leaves_the_reason_and_a_writer_without_one_no_file(
        tmp_path: Path, fresh_database_url: str) -> None:
    store = EventStore(fresh_database_url)
    await store.open()
    try:
        async with store.engine.begin() as conn:
            await conn.execute(text("DROP TABLE execution_events"))
        why = await read_events(store, report())
        await ActivityEnvironment().run(ReportWriter(tmp_path, events=store).write_report,
                                        WriteReportInput(report=report()))
    finally:
        await store.close()
    assert isinstance(why, str) and why.startswith("the event store could not be read")
    text_md = (tmp_path / "run-1" / "timeline.md").read_text(encoding="utf-8")
    assert "The events are not shown: the event store could not be read" in text_md
    await ActivityEnvironment().run(ReportWriter(tmp_path / "none").write_report,
                                    WriteReportInput(report=report()))
    assert not (tmp_path / "none" / "run-1" / "timeline.md").exists()
