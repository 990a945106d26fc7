"""Imported DABench- and DiscoveryBench-shaped folders run as suites on scripted traffic.

Every role the runs call is answered by a scripted Messages API server; the judge is asked
on the evaluating side through the same kind of gateway. The first DABench question is
answered right, the second with a misread column (the lowest income for the highest): the
scores say so, and the run's own check says the answer's citation does not hold.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import scripted_pools
from tests.support.fake_anthropic import FakeAnthropic
from tests.workers.evaluation.benchmark_folders import (
    dabench_folder,
    discoverybench_folder,
    script,
)
from workers.evaluation.configurations import Configuration
from workers.evaluation.curve import points, run_curve, write_curve
from workers.evaluation.imports import import_dabench, import_discoverybench, write_suite
from workers.evaluation.runner import Evaluation
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    async with scripted_pools(dev_env.client, fresh_database_url, tmp_path / "assay",
                              task_queue, script) as served:
        yield served


@pytest.mark.timeout(900)
async def test_imported_benchmarks_run_and_are_scored_as_the_benchmarks_score(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    dab = dabench_folder(tmp_path)
    dab_suite = write_suite(import_dabench(dab), dab / "assay-suite.json")
    run = Evaluation(dab_suite, dab, settings=settings, live=True, parallel=2)
    right, wrong = await run.run_configuration(client, Configuration("full"), 1)
    assert (right.passed, right.held, right.answer_problems) == (
        True, ["@mean_age[35.25] (want 35.25)"], [])
    assert (wrong.passed, wrong.missed) == (False, ["@max_income[38000] (want 61000)"])
    assert (right.cause, wrong.cause) == ("", "verification")
    assert wrong.answer_problems == [  # the run's own check caught it too
        "@max_income: 38000 differs from stats.max_income = 61000.0"]
    db = discoverybench_folder(tmp_path)
    db_suite = write_suite(import_discoverybench(db), db / "assay-suite.json")
    judged = Evaluation(db_suite, db, settings=settings, live=True)
    judged.judge_record = tmp_path / "judge.jsonl"
    (sample,) = await judged.run_configuration(client, Configuration("full"), 1)
    assert sample.passed, (sample.error, sample.missed)
    assert sample.judgement is not None and sample.judgement["score"] == 1.0
    assert "Same adults" in sample.judgement["reasons"]
    assert judged.judge_record.is_file()  # the judge's traffic, to replay offline
    judge_requests = [r for r in fake.requests if r.body["tools"][0]["name"] == "JudgeOutput"]
    assert len(judge_requests) == 1


@pytest.mark.timeout(900)
async def test_a_learning_curve_runs_each_task_in_order_with_learning_on_then_off(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, _fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    dab = dabench_folder(tmp_path)
    suite = write_suite(import_dabench(dab), dab / "assay-suite.json")
    evaluation = Evaluation(suite, dab, settings=settings, live=True)
    passes: list[str] = []
    samples = await run_curve(evaluation, client, lambda c, _s: passes.append(c.name))
    assert passes == ["learning", "no-learning"]
    assert [(s.configuration, s.task, s.passed) for s in samples] == [
        ("learning", "dabench-0", True), ("learning", "dabench-1", False),
        ("no-learning", "dabench-0", True), ("no-learning", "dabench-1", False)]
    assert [p.pass_rate for p in points(samples)] == [1.0, 0.5, 1.0, 0.5]
    image, lines = write_curve(tmp_path / "report", samples, "dabench")
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"![learning curve]({image.name})" in lines
