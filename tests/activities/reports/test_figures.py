"""The run's figures: a readable timeline PNG of the tasks' phases, the DAG in Mermaid."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from PIL import Image

from activities.reports.figures import PHASE_COLOURS, STATUS_COLOURS, mermaid, phase_spans
from activities.reports.timeline import ROW, TOP, draw_timeline, ticks
from workflows.contracts.results import PhaseMark, RunReport, TaskResult

START = datetime(2026, 1, 1, tzinfo=UTC)


def timed(tid: str, status: str, offset: int, phases: list[tuple[str, int]],
          end: int) -> TaskResult:
    marks = [PhaseMark(phase=p, at=START + timedelta(seconds=offset + s)) for p, s in phases]
    return TaskResult.model_validate({
        "task_id": tid, "status": status, "status_reason": "r", "phases": marks,
        "started_at": START + timedelta(seconds=offset),
        "finished_at": START + timedelta(seconds=offset + end)})


def run(tasks: list[TaskResult], deps: dict[str, list[str]] | None = None) -> RunReport:
    return RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64, status="partial",
                     timestamp="20260101_000000", started_at=START, finished_at=START,
                     tasks=tasks, dependencies=deps or {})


TASKS = [
    timed("describe", "completed", 0, [("implement", 1), ("review", 3), ("execute", 5),
                                       ("verify", 9), ("finalize", 10), ("done", 10)], 10),
    timed("compare", "failed", 10, [("implement", 1), ("review", 2), ("execute", 4),
                                    ("execution_retry", 8), ("finalize", 12)], 12),
]


def test_phase_spans_run_from_each_mark_to_the_next_and_the_last_to_the_end() -> None:
    spans = phase_spans(TASKS[1])
    assert [(p, (s - START).seconds, (e - START).seconds) for p, s, e in spans] == [
        ("intake", 10, 11), ("implement", 11, 12), ("review", 12, 14), ("execute", 14, 18),
        ("execution_retry", 18, 22), ("finalize", 22, 22)]


def test_the_timeline_is_a_png_with_every_task_drawn(tmp_path: Path) -> None:
    path = draw_timeline(run(TASKS), tmp_path)

    assert path == "figures/timeline.png"
    image = Image.open(tmp_path / path).convert("RGB")
    assert image.size[0] >= 800 and image.size[1] >= 200
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 50  # text, bars and legend, not a blank canvas
    for phase in ("execute", "review", "execution_retry"):
        hexed = PHASE_COLOURS[phase].lstrip("#")
        assert tuple(int(hexed[i:i + 2], 16) for i in (0, 2, 4)) in colours, phase


def _colours(path: Path) -> set[object]:
    with Image.open(path) as image:
        return {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)
                or []}


def _height(path: Path) -> int:
    with Image.open(path) as image:
        return image.size[1]


def _rgb(hexed: str) -> object:
    return (int(hexed[1:3], 16), int(hexed[3:5], 16), int(hexed[5:7], 16))


def test_a_task_that_never_ran_keeps_its_row_with_its_status(tmp_path: Path) -> None:
    blocked = TaskResult(task_id="report", status="blocked", status_reason="compare failed")
    assert draw_timeline(run(TASKS), tmp_path / "two") is not None
    path = draw_timeline(run([*TASKS, blocked]), tmp_path / "three")
    assert path is not None
    assert _height(tmp_path / "three" / path) > _height(
        tmp_path / "two" / "figures" / "timeline.png")  # one more row
    assert _rgb(STATUS_COLOURS["blocked"]) in _colours(tmp_path / "three" / path)
    assert _rgb(STATUS_COLOURS["blocked"]) not in _colours(tmp_path / "two" / "figures"
                                                           / "timeline.png")


def test_a_run_where_no_task_ran_still_gets_a_timeline(tmp_path: Path) -> None:
    untimed = TaskResult(task_id="a", status="cancelled", status_reason="plan rejected")
    path = draw_timeline(run([untimed]), tmp_path)
    assert path == "figures/timeline.png"
    assert _rgb(STATUS_COLOURS["cancelled"]) in _colours(tmp_path / path)
    assert draw_timeline(run([]), tmp_path / "none") is None


def test_a_long_task_id_is_shortened_and_leaves_two_thirds_to_the_bars(tmp_path: Path) -> None:
    task = timed("x" * 300, "completed", 0, [("execute", 1)], 2)
    path = draw_timeline(run([task]), tmp_path)
    assert path is not None
    with Image.open(tmp_path / path) as image:
        width = image.size[0]
        first_bar = image.convert("RGB").getpixel((width // 3 + 3, TOP + ROW // 2))
    assert first_bar == _rgb(PHASE_COLOURS["intake"])  # the bars start within the first third


def test_the_axis_ticks_are_round_and_reach_past_the_end() -> None:
    assert ticks(1.65) == [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    assert ticks(11) == [0, 2, 4, 6, 8, 10, 12]
    assert ticks(3600) == [0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000]
    assert ticks(0) == [0, 0.0002, 0.0004, 0.0006, 0.0008, 0.001]
    for span in (0.003, 0.7, 13.2, 97, 12_345.6):
        marks = ticks(span)
        assert marks[0] == 0 and marks[-1] >= span and len(marks) <= 9


def test_the_dag_lists_every_task_with_its_status_and_its_edges() -> None:
    blocked = TaskResult(task_id="report", status="blocked", status_reason="compare failed")
    lines = mermaid(run([*TASKS, blocked], {"compare": ["describe"], "report": ["compare"]}))

    assert lines[:2] == ["```mermaid", "flowchart LR"] and lines[-1] == "```"
    assert '  t0["describe<br/>completed"]:::completed' in lines
    assert '  t1["compare<br/>failed"]:::failed' in lines
    assert '  t2["report<br/>blocked"]:::blocked' in lines
    assert "  t0 --> t1" in lines and "  t1 --> t2" in lines
    assert {line.split()[1] for line in lines if line.startswith("  classDef")} == {
        "blocked", "completed", "failed"}
