"""The iris example plan is valid and every job in it runs and meets its own checks.

Each job runs for real, as a subprocess in a fresh working directory laid out by the job
conventions (inputs by file name, ``deps/<task_id>/<artifact>``, args as ``--key=value`` flags
and as the JSON file named by ``ASSAY_JOB_ARGS``), with ``-I -S`` so that any import outside
the standard library fails.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from activities.evidence.verify import evaluate_check
from workers.intake.planfile import load_plan as load_plan_file
from workflows.contracts.plan import Decision, JobSpec, Plan, Scalar, check_graph

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "iris"
PLAN_FILE = EXAMPLE / "plan.json"

@dataclass(frozen=True)
class JobRun:
    """What one job left behind."""

    workdir: Path
    returncode: int
    stderr: str
    metrics: dict[str, Any]


def load_plan() -> Plan:
    return Plan.model_validate(json.loads(PLAN_FILE.read_text(encoding="utf-8")))


def job_of(decision: Decision) -> JobSpec:
    assert decision.job is not None, f"task {decision.task_id} has no job"
    return decision.job


def run_job(job: JobSpec, workdir: Path, args: dict[str, Scalar] | None = None, *,
            folder: Path = EXAMPLE) -> JobRun:
    """Run a job's script (its ``entry`` below ``folder``) in ``workdir`` as the sandbox does."""
    assert job.entry is not None
    args = job.args if args is None else args
    args_file = workdir.parent / f"{workdir.name}.args.json"
    args_file.write_text(json.dumps(args), encoding="utf-8")
    script = workdir / Path(job.entry).name
    shutil.copyfile(folder / job.entry, script)
    env = {"PATH": os.environ.get("PATH", ""), "ASSAY_JOB_ARGS": str(args_file)}
    done = subprocess.run(
        [sys.executable, "-I", "-S", script.name, *(f"--{k}={v}" for k, v in args.items())],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    metrics_file = workdir / "metrics.json"
    metrics: dict[str, Any] = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    return JobRun(workdir, done.returncode, done.stderr, metrics)


def prepare_workdir(decision: Decision, root: Path, runs: dict[str, JobRun], *,
                    plan: Plan | None = None, folder: Path = EXAMPLE) -> Path:
    """Inputs read-only by file name; declared artifacts of dependencies under deps/."""
    workdir = root / f"task-{decision.task_id}"
    workdir.mkdir()
    for name in decision.inputs:
        target = workdir / Path(name).name
        shutil.copyfile(folder / name, target)
        target.chmod(0o444)
    decisions = (plan or load_plan()).by_id()
    for dep in decision.dependencies:
        dep_dir = workdir / "deps" / dep
        dep_dir.mkdir(parents=True)
        for artifact in job_of(decisions[dep]).expected_artifacts:
            shutil.copyfile(runs[dep].workdir / artifact, dep_dir / artifact)
    return workdir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, JobRun]:
    """Every job of the plan, run once in dependency order."""
    plan = load_plan()
    root = tmp_path_factory.mktemp("iris")
    done: dict[str, JobRun] = {}
    for task_id in check_graph(plan):
        decision = plan.by_id()[task_id]
        done[task_id] = run_job(job_of(decision), prepare_workdir(decision, root, done))
    return done


def iris_column(name: str, species: str | None = None) -> list[float]:
    with (EXAMPLE / "iris.csv").open(newline="") as handle:
        return [float(r[name]) for r in csv.DictReader(handle)
                if species is None or r["species"] == species]


def test_plan_is_valid_and_ordered() -> None:
    plan = load_plan()
    assert check_graph(plan) == ["1", "2", "3", "4"]
    assert plan.by_id()["4"].dependencies == ["2", "3"]
    for decision in plan.decisions:
        job = job_of(decision)
        assert job.entry is not None and (EXAMPLE / job.entry).is_file(), job.entry
        assert job.expected_artifacts, f"task {decision.task_id} declares no artifact"
        assert decision.checks, f"task {decision.task_id} has no machine-checkable criterion"
        for name in decision.inputs:
            assert (EXAMPLE / name).is_file(), name


def test_plan_loads_as_the_cli_loads_it() -> None:
    request = load_plan_file(PLAN_FILE, max_bytes=1_500_000)
    assert request.plan is not None
    resolved = request.plan.by_id()
    for task_id, decision in load_plan().by_id().items():
        job = job_of(resolved[task_id])
        assert job.source == (EXAMPLE / str(job_of(decision).entry)).read_text(encoding="utf-8")
        assert [f.name for f in resolved[task_id].resolved_inputs] == decision.inputs


def test_report_reads_only_declared_dependency_artifacts() -> None:
    plan = load_plan().by_id()
    for value in job_of(plan["4"]).args.values():
        if str(value).startswith("deps/"):
            _, dep, name = str(value).split("/", 2)
            assert dep in plan["4"].dependencies
            assert name in job_of(plan[dep]).expected_artifacts


def test_dataset_is_fishers_iris() -> None:
    with (EXAMPLE / "iris.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 150
    assert {r["species"] for r in rows} == {"setosa", "versicolor", "virginica"}
    assert statistics.fmean(iris_column("sepal_length")) == pytest.approx(5.8433, abs=1e-4)


@pytest.mark.parametrize("task_id", ["1", "2", "3", "4"])
def test_job_meets_checks_and_leaves_artifacts(runs: dict[str, JobRun], task_id: str) -> None:
    decision = load_plan().by_id()[task_id]
    run = runs[task_id]
    assert run.returncode == 0, run.stderr
    job = job_of(decision)
    for metric in job.expected_metrics:
        assert metric in run.metrics, f"task {task_id} did not report {metric}"
    for check in decision.checks:  # evaluated exactly as the verify phase evaluates them
        result = evaluate_check(check, run.metrics)
        assert result.passed, f"task {task_id}: {check.describe()}: {result.reason}"
    for name in job.expected_artifacts:
        artifact = run.workdir / name
        assert artifact.is_file() and artifact.stat().st_size > 0, name


def test_statistics_agree_with_an_independent_computation(runs: dict[str, JobRun]) -> None:
    a, b = iris_column("sepal_length", "setosa"), iris_column("sepal_length", "versicolor")
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    t = (statistics.fmean(a) - statistics.fmean(b)) / se
    assert runs["2"].metrics["t_statistic"] == pytest.approx(t, abs=1e-5)
    assert runs["2"].metrics["welch_p_value"] < 1e-15  # R: t = -10.521, df = 86.54, p = 3.7e-17
    fit = statistics.linear_regression(iris_column("petal_length"), iris_column("petal_width"))
    assert runs["3"].metrics["slope"] == pytest.approx(fit.slope, abs=1e-5)
    assert runs["3"].metrics["intercept"] == pytest.approx(fit.intercept, abs=1e-5)
    r = statistics.correlation(iris_column("petal_length"), iris_column("petal_width"))
    assert runs["3"].metrics["r2"] == pytest.approx(r * r, abs=1e-5)


def test_report_cites_the_numbers_of_its_dependencies(runs: dict[str, JobRun]) -> None:
    report = (runs["4"].workdir / "findings.md").read_text(encoding="utf-8")
    assert "2 of 2 hypotheses supported" in report
    assert f"t = {runs['2'].metrics['t_statistic']:.3f}" in report
    assert f"r² = {runs['3'].metrics['r2']:.4f}" in report


def write_setosa_halves(path: Path) -> None:
    """Setosa rows relabelled alternately ``odd``/``even``: two samples with no real difference."""
    with (EXAMPLE / "iris.csv").open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["species"] == "setosa"]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for i, row in enumerate(rows):
            writer.writerow({**row, "species": "odd" if i % 2 else "even"})


def test_permutation_p_value_is_reproducible_and_seed_dependent(tmp_path: Path) -> None:
    job = job_of(load_plan().by_id()["2"])
    args: dict[str, Scalar] = {**job.args, "data": "halves.csv", "group_a": "odd",
                               "group_b": "even", "permutations": 400}
    p_values: list[float] = []
    for label, seed in (("first", 7), ("again", 7), ("other", 8)):
        workdir = tmp_path / label
        workdir.mkdir()
        write_setosa_halves(workdir / "halves.csv")
        run = run_job(job, workdir, {**args, "seed": seed})
        assert run.returncode == 0, run.stderr
        p_values.append(run.metrics["p_value"])
    assert p_values[0] == p_values[1]
    assert p_values[0] != p_values[2]
    assert min(p_values) > 0.05  # halves of one species: the test must not find a difference


def test_missing_input_fails_with_a_message_naming_it(tmp_path: Path) -> None:
    run = run_job(job_of(load_plan().by_id()["1"]), tmp_path)
    assert run.returncode != 0
    assert "'iris.csv' not found" in run.stderr and "inputs" in run.stderr
