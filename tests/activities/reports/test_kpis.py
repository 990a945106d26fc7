"""Planning KPIs: completion, estimation accuracy, calibration, dependencies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.reports.kpis import accuracy, estimates, markdown, run_kpis
from activities.reports.writer import ReportWriter
from workflows.contracts.kinds import task_kind
from workflows.contracts.kpis import estimated_seconds
from workflows.contracts.results import RunReport, TaskResult, WriteReportInput

START = datetime(2026, 1, 1, tzinfo=UTC)


def task(tid: str, priority: str = "MEDIUM", status: str = "completed",
         took_s: float = 60.0) -> TaskResult:
    return TaskResult(task_id=tid, priority=priority, status=status,  # type: ignore[arg-type]
                      status_reason="ok", started_at=START,
                      finished_at=START + timedelta(seconds=took_s))


def report(tasks: list[TaskResult], deps: dict[str, list[str]] | None = None,
           estimated: dict[str, float] | None = None) -> RunReport:
    table: dict[str, dict[str, float]] = {}
    for p in ("HIGH", "MEDIUM", "LOW"):
        group = [t for t in tasks if t.priority == p]
        if group:
            done = sum(t.status == "completed" for t in group)
            table[p] = {"total": len(group), "completed": done, "rate": done / len(group)}
    return RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64, status="partial",
                     timestamp="20260101_000000", started_at=START, finished_at=START,
                     tasks=tasks, completion_by_priority=table, dependencies=deps or {},
                     estimated_s=estimated or {})


def test_the_seeds_example_estimated_2_h_actual_45_min() -> None:
    assert accuracy(7200, 2700) == pytest.approx(0.375)
    assert accuracy(100, 130) == pytest.approx(0.70)
    assert accuracy(100, 70) == pytest.approx(0.70)
    assert accuracy(100, 300) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="positive"):
        accuracy(0, 5)


def test_estimates_read_the_plans_time_keys_in_seconds() -> None:
    assert estimated_seconds({"gpu_hours": 1.5}) == 5400
    assert estimated_seconds({"minutes": 2, "hours": 9}) == 120
    assert estimated_seconds({"gpu_memory_gb": 8}) is None
    assert estimated_seconds(None) is None


@pytest.mark.parametrize(("completed", "total", "met"), [(4, 5, True), (3, 4, False)])
def test_high_completion_is_met_from_80_percent(completed: int, total: int,
                                                met: bool) -> None:
    tasks = [task(f"t{i}", "HIGH", "completed" if i < completed else "failed")
             for i in range(total)]
    assert run_kpis(report(tasks)).high_completion_met is met
    assert run_kpis(report([task("m")])).high_completion_met is None


@pytest.mark.parametrize(("actual", "met"), [(130.0, True), (131.0, False)])
def test_estimation_is_met_from_70_percent(actual: float, met: bool) -> None:
    kpis = run_kpis(report([task("a", took_s=actual), task("b", status="failed")],
                           estimated={"a": 100.0, "b": 10.0}))
    assert [e.task_id for e in kpis.estimates] == ["a"]
    assert kpis.estimation_met is met
    assert run_kpis(report([task("a")])).estimation_accuracy is None


def test_calibration_and_unplanned_blockers() -> None:
    tasks = [task("data", "HIGH"), task("fit", "HIGH", "failed"), task("plot", "LOW"),
             task("report", "MEDIUM", "blocked"), task("extra", "HIGH")]
    deps = {"fit": ["data", "plot"], "report": ["fit"]}
    kpis = run_kpis(report(tasks, deps))
    assert (kpis.high_blocking, kpis.high_not_blocking) == (["data", "fit"], ["extra"])
    assert kpis.low_blocking == ["plot"]
    assert (kpis.unplanned_blockers, kpis.planned_blocks) == (["fit"], ["report"])


def test_estimates_need_a_completed_task_with_times() -> None:
    untimed = TaskResult(task_id="u", status="completed", status_reason="ok")
    assert estimates([untimed, task("a", took_s=90)], {"u": 10.0, "a": 60.0})[0].accuracy == 0.5


async def test_the_results_json_and_summary_carry_the_kpis(tmp_path: Path) -> None:
    run = report([task("a", "HIGH", took_s=45 * 60), task("b", "HIGH", "failed")],
                 deps={"b": ["a"]}, estimated={"a": 7200.0})
    paths = await ActivityEnvironment().run(ReportWriter(tmp_path).write_report,
                                            WriteReportInput(report=run))
    back = RunReport.model_validate_json(Path(paths.results_json).read_text(encoding="utf-8"))
    assert back.kpis is not None and back.kpis.estimation_accuracy == 0.375
    text = Path(paths.summary_md).read_text(encoding="utf-8")
    assert "## Planning KPIs" in text
    assert "- HIGH completion: 50% of 2, target ≥ 80% (below target)" in text
    assert "- Estimation accuracy: 38%, target ≥ 70% (below target) (`a` 38%)" in text
    assert "- Dependency correctness: 1 unplanned blocker (`b`)" in text


def test_accuracy_is_kept_per_task_kind() -> None:
    fit = task("a", took_s=50).model_copy(update={"action": "Fit the model"})
    fit2 = task("b", took_s=100).model_copy(update={"action": "Fit the model"})
    plot = task("c", took_s=100).model_copy(update={"action": "Plot the curves"})
    kpis = run_kpis(report([fit, fit2, plot], estimated={"a": 100.0, "b": 100.0, "c": 100.0}))
    fitting, plotting = task_kind("Fit the model"), task_kind("Plot the curves")
    assert fitting != plotting  # kinds, not first words: one per analysis
    assert kpis.accuracy_by_kind == {fitting: 0.75, plotting: 1.0}  # a and b averaged
    text = "\n".join(markdown(kpis))
    assert f"{fitting} 75%" in text and f"{plotting} 100%" in text
