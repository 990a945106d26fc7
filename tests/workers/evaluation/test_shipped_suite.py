"""The shipped suite's plan tasks: every job, run for real, meets its task's reference answer.

Each job runs as a subprocess in a fresh working directory laid out as the sandbox lays it
out (inputs by file name, args as ``--key=value`` flags), with ``-I -S`` so that an import
outside the standard library fails. Its ``metrics.json`` is scored as the run's results JSON
would be; the references were computed with numpy and scipy, so a job that drifts from them
fails here before it fails an evaluation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workers.evaluation.scoring import score
from workers.evaluation.suite import SuiteTask, load_suite
from workers.intake.planfile import load_plan

SUITE, BASE = load_suite(Path(__file__).resolve().parents[3] / "examples" / "eval"
                         / "plans-suite.json")
PLANNED = [t for t in SUITE.tasks if t.plan]


@pytest.mark.parametrize("task", PLANNED, ids=[t.id for t in PLANNED])
def test_the_job_meets_its_reference_answer(task: SuiteTask, tmp_path: Path) -> None:
    plan_file = BASE / (task.plan or "")
    plan = load_plan(plan_file, max_bytes=1_500_000).plan
    assert plan is not None
    decision = plan.decisions[0]
    job = decision.job
    assert job is not None and job.entry is not None
    for name in decision.inputs:
        shutil.copyfile(plan_file.parent / name, tmp_path / Path(name).name)
    script = plan_file.parent / job.entry
    argv = [sys.executable, "-I", "-S", str(script),
            *(f"--{key}={value}" for key, value in job.args.items())]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert set(job.expected_metrics) <= set(metrics)
    results = {"status": "completed", "tasks": [
        {"task_id": decision.task_id, "status": "completed", "metrics": metrics}]}
    missed = [v.line() for v in score(results, task.expect) if not v.passed]
    assert missed == []


def test_plan_tasks_are_twenty_and_every_one_is_a_single_task_with_a_job() -> None:
    assert len(PLANNED) >= 20
    for task in PLANNED:
        plan = load_plan(BASE / (task.plan or ""), max_bytes=1_500_000).plan
        assert plan is not None and [d.task_id for d in plan.decisions] == ["main"], task.id


def test_the_data_sets_are_what_make_data_writes(tmp_path: Path) -> None:
    """The committed tables are reproduced byte for byte by the generator (fixed seeds)."""
    (tmp_path / "eval").mkdir()
    (tmp_path / "iris").mkdir()
    shutil.copyfile(BASE / "make_data.py", tmp_path / "eval" / "make_data.py")
    shutil.copyfile(BASE.parent / "iris" / "iris.csv", tmp_path / "iris" / "iris.csv")
    subprocess.run([sys.executable, "-I", "-S", str(tmp_path / "eval" / "make_data.py")],
                   check=True, timeout=60)
    written = sorted((tmp_path / "eval" / "plans" / "data").iterdir())
    shipped = sorted((BASE / "plans" / "data").iterdir())
    assert [p.name for p in written] == [p.name for p in shipped]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(written, shipped, strict=True))
