"""The study example's plans and jobs, run directly: each cycle's plan validates with its
hypotheses, every job meets its checks and passes the review panel, and the fits give the
numbers the study's story rests on (a straight line refuted, a parabola supported)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.evidence.verify import evaluate_check
from activities.review.infra import InfrastructureReviewer
from activities.review.panel import review_ops, review_quality_safety
from tests.examples.test_examples import JobRun, job_of, prepare_workdir, run_job
from tests.examples.test_sweep_example import review_input
from workers.intake.planfile import load_plan
from workflows.contracts.plan import Plan, check_graph, cycle_ref
from workflows.contracts.verdicts import panel_approves

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "study"
CYCLES = {1: FOLDER / "plan.json", 2: FOLDER / "cycle-2.json"}


def plan_of(cycle: int) -> Plan:
    plan = load_plan(CYCLES[cycle], max_bytes=1_500_000).plan
    assert plan is not None
    return plan


def workdir(cycle: int, task_id: str, root: Path, done: dict[int, dict[str, JobRun]]) -> Path:
    """The task's working directory as the sandbox makes it: its dependencies' artifacts,
    and the earlier cycles' it reuses, under ``deps/``."""
    plan = plan_of(cycle)
    decision = plan.by_id()[task_id]
    folder = prepare_workdir(decision, root, done.get(cycle, {}), plan=plan, folder=FOLDER)
    for ref in decision.reuse:
        earlier, earlier_task = cycle_ref(ref)
        target = folder / "deps" / ref
        target.mkdir(parents=True)
        for name in job_of(plan_of(earlier).by_id()[earlier_task]).expected_artifacts:
            shutil.copyfile(done[earlier][earlier_task].workdir / name, target / name)
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, JobRun]]:
    """Each cycle's jobs, run in order."""
    done: dict[int, dict[str, JobRun]] = {}
    for cycle in CYCLES:
        plan, root = plan_of(cycle), tmp_path_factory.mktemp(f"cycle-{cycle}")
        done[cycle] = {}
        for task_id in check_graph(plan):
            done[cycle][task_id] = run_job(job_of(plan.by_id()[task_id]),
                                           workdir(cycle, task_id, root, done), folder=FOLDER)
    return done


def test_each_cycle_proposes_its_hypotheses_and_links_its_fit() -> None:
    first, second = plan_of(1), plan_of(2)
    assert [h.id for h in first.hypotheses] == ["H1", "H2"]
    assert [h.id for h in second.hypotheses] == ["H2"]
    assert second.hypotheses[0] == first.hypotheses[1]  # the same H2, re-proposed unchanged
    assert first.by_id()["fit"].hypothesis == "H1" and second.by_id()["fit"].hypothesis == "H2"
    assert [d.task_id for d in second.decisions] == ["fit"]  # the data is cycle 1's, reused
    assert second.by_id()["fit"].reuse == ["c1.data"]


@pytest.mark.parametrize(("cycle", "task_id"), [(1, "data"), (1, "fit"), (2, "fit")])
def test_every_job_meets_its_checks(runs: dict[int, dict[str, JobRun]], cycle: int,
                                    task_id: str) -> None:
    decision = plan_of(cycle).by_id()[task_id]
    run = runs[cycle][task_id]
    assert run.returncode == 0, run.stderr
    for check in decision.checks:
        assert evaluate_check(check, run.metrics).passed, check.describe()
    for name in job_of(decision).expected_artifacts:
        assert (run.workdir / name).stat().st_size > 0, name


def test_the_line_is_refuted_and_the_parabola_supported(
        runs: dict[int, dict[str, JobRun]]) -> None:
    line, parabola = runs[1]["fit"].metrics, runs[2]["fit"].metrics
    assert (line["degree"], parabola["degree"]) == (1, 2)
    assert line["r2"] == pytest.approx(0.1939, abs=1e-4)
    assert parabola["r2"] == pytest.approx(0.9893, abs=1e-4)
    threshold = plan_of(1).hypotheses[0].test.threshold
    assert isinstance(threshold, float)
    assert line["r2"] < threshold <= parabola["r2"]


def test_a_degree_out_of_range_fails_with_a_reason(runs: dict[int, dict[str, JobRun]],
                                                   tmp_path: Path) -> None:
    job = job_of(plan_of(2).by_id()["fit"])
    run = run_job(job, workdir(2, "fit", tmp_path, runs), {**job.args, "degree": 9},
                  folder=FOLDER)
    assert run.returncode != 0 and "give a degree from 1 to 6" in run.stderr


async def test_every_job_passes_the_review_panel(tmp_path: Path) -> None:
    infrastructure = InfrastructureReviewer(tmp_path, sys.executable)
    env = ActivityEnvironment()
    for cycle in CYCLES:
        plan = plan_of(cycle)
        for decision in plan.decisions:
            req = review_input(decision, job_of(decision), plan)
            verdicts = [await env.run(review_ops, req),
                        await env.run(review_quality_safety, req),
                        await env.run(infrastructure.review_infrastructure, req)]
            assert panel_approves(verdicts), (cycle, decision.task_id,
                                              [v.reasoning for v in verdicts])
