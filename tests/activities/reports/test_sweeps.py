"""A group of branches as one table: every line's parameters, metrics, status, cost, and the kept
line with why; written into the results JSON and the Markdown report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from activities.reports.sweeps import sweep_markdown, sweep_tables
from activities.reports.writer import ReportWriter
from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import (
    BranchChange,
    BranchRecord,
    BranchTree,
    LineScore,
)
from workflows.contracts.results import RunReport, TaskResult

GROUP = "fit:planned#1"
R2 = Metric(name="r2")


def estimate(value: float, low: float, high: float) -> dict[str, object]:
    return {"value": value, "ci": [low, high], "level": 0.95, "n": 300, "method": "bootstrap"}


def point(value: float, low: float, high: float, branch: str | None = None) -> TaskResult:
    return TaskResult(task_id="fit", status="completed", status_reason="ok", branch=branch,
                      metrics={"r2": estimate(value, low, high), "lr": 0.1, "curve": [1, 2],
                               "per_class": {"a": 1}})


def tree() -> BranchTree:
    records = [BranchRecord(
        name=name, from_task="fit", group=GROUP, metric=R2, status="completed",
        changes=[BranchChange(task_id="fit", field="args.lr", old=0.2, new=lr),
                 BranchChange(task_id="summary", field="args.x", old=1, new=2)],
        score=LineScore(completed=True, metric=value, rank=rank, cost_usd=0.01, cpu_s=1.5))
        for name, lr, value, rank in (("lr-0.3", 0.3, 0.9294, 2), ("lr-0.35", 0.35, 0.9295, 1))]
    return BranchTree(
        run_id="r", branches=records,
        main={GROUP: LineScore(completed=True, metric=0.9285, rank=3, cpu_s=1.2)},
        kept={GROUP: "main"}, tied={GROUP: ["lr-0.35", "lr-0.3", "main"]},
        why={GROUP: "tie on r2: lr-0.35, lr-0.3, main differ within their intervals; main "
                    "kept as the simplest line"})


POINTS = {"main": point(0.9285, 0.9122, 0.9387), "lr-0.3": point(0.9294, 0.9131, 0.9398),
          "lr-0.35": point(0.9295, 0.9132, 0.9399)}


def test_every_line_is_one_row_with_its_parameters_metrics_cost_and_tie() -> None:
    tables = sweep_tables(tree(), lambda line, tid: POINTS[line] if tid == "fit" else None)
    assert len(tables) == 1
    table = tables[0]
    assert (table.kept, table.tie, table.ties, table.from_task) == ("main", True, "simplest",
                                                                    "fit")
    assert [line.line for line in table.lines] == ["lr-0.35", "lr-0.3", "main"]
    lines = {line.line: line for line in table.lines}
    assert lines["lr-0.3"].parameters == {"args.lr": 0.3, "summary:args.x": 2}
    assert lines["main"].parameters == {} and lines["main"].kept and lines["main"].tied
    assert lines["lr-0.3"].metrics == {"r2": estimate(0.9294, 0.9131, 0.9398), "lr": 0.1}
    assert lines["lr-0.3"].cost_usd == 0.01 and lines["lr-0.3"].status == "completed"


def test_the_markdown_table_says_the_tie_the_kept_line_and_why() -> None:
    tables = sweep_tables(tree(), lambda line, _: POINTS[line])
    text = "\n".join(sweep_markdown(tables))
    assert "### Sweep from task fit at planned on r2 (maximize)" in text
    assert "Kept: **main** (a tie; selection best, tie rule simplest). tie on r2:" in text
    assert "| line | parameters | status | r2 | lr | rank | cost (USD) | CPU time | kept |" in text
    assert ("| lr-0.3 | args.lr=0.3; summary:args.x=2 | completed | 0.9294 \\[0.9131, 0.9398\\] "
            "95 % | 0.1 | 2 | 0.0100 |") in text
    assert text.rstrip().endswith("| kept, tied |")


def test_a_line_without_its_file_still_has_its_row() -> None:
    table = sweep_tables(tree(), lambda line, _: None)[0]
    assert all(line.metrics == {} for line in table.lines)
    assert "| - |" in "\n".join(sweep_markdown([table]))


def test_the_writer_puts_the_table_in_the_results_json_and_the_summary(tmp_path: Path) -> None:
    tasks = tmp_path / "r" / "tasks"
    tasks.mkdir(parents=True)
    for line, result in POINTS.items():
        name = "fit.json" if line == "main" else f"fit.branch-{line}.json"
        (tasks / name).write_text(result.model_dump_json())
    now = datetime(2026, 1, 1, tzinfo=UTC)
    report = RunReport(run_id="r", plan_name="p", plan_sha256="0" * 64, status="completed",
                       timestamp="20260101_000000", started_at=now, finished_at=now,
                       tasks=[POINTS["main"]], branches=tree())
    paths = ReportWriter(tmp_path)._write(report)  # pyright: ignore[reportPrivateUsage]
    written = json.loads(Path(paths.results_json).read_text())
    assert [line["line"] for line in written["sweeps"][0]["lines"]] == ["lr-0.35", "lr-0.3",
                                                                        "main"]
    assert written["sweeps"][0]["lines"][1]["metrics"]["r2"]["ci"] == [0.9131, 0.9398]
    summary = Path(paths.summary_md).read_text()
    assert "## Sweeps" in summary and "| main | (as planned) | completed |" in summary
