"""The report's Checkpoints section and ``assay checkpoints``' rows: one per checkpoint."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.reports.checkpoints import rows
from activities.reports.markdown import render_markdown
from tests.activities.reports.test_reports import result
from workflows.contracts.checkpoints import Checkpoint, CheckpointList

WHEN = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)


def listing(dropped: int = 0) -> CheckpointList:
    return CheckpointList(run_id="r", dropped=dropped, checkpoints=[
        Checkpoint(name="before-refit", by="ada", at=WHEN, from_task="2",
                   tasks={"1": "completed"}, artifacts=1),
        Checkpoint(name="error:2:1", kind="error", by="assay|*x*", at=WHEN, from_task="2",
                   from_phase="execute", tasks={"1": "completed", "2": "failed"})])


def test_the_report_lists_each_checkpoint_and_how_many_were_dropped() -> None:
    text = render_markdown(result(checkpoints=listing(dropped=3).model_dump(mode="json")))
    section = text[text.index("## Checkpoints"):]
    assert ("| before-refit | manual | ada | 2026-11-28 09:30:00 | 2:planned | 1 completed |"
            in section), section
    assert "assay\\|\\*x\\*" in section  # a hostile name stays inside its cell
    assert "3 older automatic checkpoints dropped (the latest 20 are kept)" in section


def test_a_run_without_checkpoints_has_no_section_and_rows_are_bounded() -> None:
    assert "## Checkpoints" not in render_markdown(result())
    many = Checkpoint(name="m", at=WHEN, tasks={str(n): "completed" for n in range(15)})
    assert rows(CheckpointList(run_id="r", checkpoints=[many]))[0][-1].endswith("(+5 more)")
    assert rows(listing())[1][4] == "2:execute"
