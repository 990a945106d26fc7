"""The sweep example: its plan and alternatives validate, and every job of every line runs.

Each job runs as ``tests/examples/test_examples.py`` runs the iris jobs (a subprocess in a
fresh working directory, ``-I -S`` so only the standard library imports), once for the main
line and once per branch with the branch's ``set`` applied as the run applies it; every job (a
branch's changed job too) passes the deterministic review panel.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.evidence.verify import evaluate_check
from activities.review.panel import InfrastructureReviewer, review_ops, review_quality_safety
from tests.examples.test_examples import JobRun, job_of, prepare_workdir, run_job
from workers.intake.planfile import load_plan
from workflows.common.changes import apply_sets
from workflows.contracts.branches import MAIN_LINE
from workflows.contracts.plan import Decision, JobSpec, Plan, check_graph
from workflows.contracts.verdicts import ReviewInput, panel_approves

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "sweep"
PLAN_FILE = FOLDER / "plan.json"


def the_plan() -> Plan:
    plan = load_plan(PLAN_FILE, max_bytes=1_500_000).plan
    assert plan is not None
    return plan


def line_jobs(plan: Plan) -> dict[str, JobSpec]:
    """The fit task's job on each line: the plan's on the main line, changed on a branch."""
    fit = plan.by_id()["fit"]
    jobs = {MAIN_LINE: job_of(fit)}
    for branch in fit.branches:
        jobs[branch.name], _ = apply_sets(job_of(fit), branch.set, "fit")
    return jobs


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, JobRun]]:
    """Every line run once: the data task once, then fit and summary per line."""
    plan = the_plan()
    decisions = plan.by_id()
    root = tmp_path_factory.mktemp("sweep")
    data = run_job(job_of(decisions["data"]),
                   prepare_workdir(decisions["data"], root, {}, plan=plan, folder=FOLDER),
                   folder=FOLDER)
    done: dict[str, dict[str, JobRun]] = {}
    for name, fit_job in line_jobs(plan).items():
        line_root = root / name
        line_root.mkdir()
        runs = {"data": data}
        runs["fit"] = run_job(fit_job, prepare_workdir(decisions["fit"], line_root, runs,
                                                       plan=plan, folder=FOLDER), folder=FOLDER)
        runs["summary"] = run_job(job_of(decisions["summary"]), prepare_workdir(
            decisions["summary"], line_root, runs, plan=plan, folder=FOLDER), folder=FOLDER)
        done[name] = runs
    return done


def test_the_plan_validates_with_its_alternatives_and_metric() -> None:
    plan = the_plan()
    assert check_graph(plan) == ["data", "fit", "summary"]
    assert plan.metric is not None and (plan.metric.name, plan.metric.direction) == (
        "r2", "maximize")
    fit = plan.by_id()["fit"]
    assert [(b.name, b.kind, b.set) for b in fit.branches] == [
        ("lr-0.01", "optimisation", {"args.lr": 0.01}),
        ("lr-0.3", "optimisation", {"args.lr": 0.3})]
    assert job_of(fit).args["lr"] == 0.1  # the main line's own rate
    for decision in plan.decisions:
        assert decision.checks and job_of(decision).expected_artifacts, decision.task_id
        assert job_of(decision).source is not None  # the intake read the entry script


@pytest.mark.parametrize("line", [MAIN_LINE, "lr-0.01", "lr-0.3"])
@pytest.mark.parametrize("task_id", ["data", "fit", "summary"])
def test_every_job_of_every_line_meets_its_checks(lines: dict[str, dict[str, JobRun]],
                                                  line: str, task_id: str) -> None:
    decision = the_plan().by_id()[task_id]
    run = lines[line][task_id]
    assert run.returncode == 0, run.stderr
    for metric in job_of(decision).expected_metrics:
        assert metric in run.metrics, f"{line}: task {task_id} did not report {metric}"
    for check in decision.checks:  # evaluated exactly as the verify phase evaluates them
        result = evaluate_check(check, run.metrics)
        assert result.passed, f"{line}: task {task_id}: {check.describe()}: {result.reason}"
    for name in job_of(decision).expected_artifacts:
        artifact = run.workdir / name
        assert artifact.is_file() and artifact.stat().st_size > 0, name


def test_the_sweep_has_a_clear_best_line(lines: dict[str, dict[str, JobRun]]) -> None:
    r2 = {line: runs["fit"].metrics["r2"] for line, runs in lines.items()}
    assert r2 == pytest.approx({"lr-0.01": 0.1777, MAIN_LINE: 0.8977, "lr-0.3": 0.9294},
                               abs=1e-4)
    for line, runs in lines.items():  # each line's summary describes that line's fit
        assert runs["summary"].metrics["r2"] == r2[line]
        text = (runs["summary"].workdir / "summary.md").read_text(encoding="utf-8")
        assert f"learning rate {runs['fit'].metrics['lr']}" in text


def test_the_best_line_nears_the_least_squares_fit(lines: dict[str, dict[str, JobRun]]) -> None:
    with (lines[MAIN_LINE]["data"].workdir / "data.csv").open(newline="") as handle:
        rows = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(handle)]
    xs, ys = [x for x, _ in rows], [y for _, y in rows]
    best = statistics.correlation(xs, ys) ** 2
    assert lines["lr-0.3"]["fit"].metrics["r2"] == pytest.approx(best, abs=1e-4)
    assert lines["lr-0.3"]["fit"].metrics["r2"] <= best  # gradient descent never beats OLS


def test_a_learning_rate_that_diverges_fails_with_a_reason(tmp_path: Path,
                                                         lines: dict[str, dict[str, JobRun]],
                                                         ) -> None:
    plan = the_plan()
    workdir = prepare_workdir(plan.by_id()["fit"], tmp_path, lines[MAIN_LINE], plan=plan,
                              folder=FOLDER)
    job = job_of(plan.by_id()["fit"])
    run = run_job(job, workdir, {**job.args, "lr": 1.5, "steps": 200}, folder=FOLDER)
    assert run.returncode != 0 and "the loss diverged" in run.stderr
    assert "lower the learning rate" in run.stderr


def review_input(decision: Decision, job: JobSpec, plan: Plan) -> ReviewInput:
    """What the task workflow hands the reviewers (dependency artifacts as deps/<id>/<name>)."""
    deps = [f"deps/{dep}/{name}" for dep in decision.dependencies
            for name in job_of(plan.by_id()[dep]).expected_artifacts]
    return ReviewInput(task_id=decision.task_id, action=decision.action,
                       acceptance_criteria=decision.acceptance_criteria, checks=decision.checks,
                       job=job, input_names=[], dependency_artifacts=deps)


async def test_every_job_of_every_line_passes_the_review_panel(tmp_path: Path) -> None:
    plan = the_plan()
    infrastructure = InfrastructureReviewer(tmp_path, sys.executable)
    env = ActivityEnvironment()
    jobs = [(d, job_of(d)) for d in plan.decisions]
    jobs += [(plan.by_id()["fit"], job) for line, job in line_jobs(plan).items()
             if line != MAIN_LINE]
    for decision, job in jobs:
        req = review_input(decision, job, plan)
        verdicts = [await env.run(review_ops, req), await env.run(review_quality_safety, req),
                    await env.run(infrastructure.review_infrastructure, req)]
        assert panel_approves(verdicts), (decision.task_id, job.args,
                                          [v.reasoning for v in verdicts])
