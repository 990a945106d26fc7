"""``--record DIR`` and ``--replay DIR``: a live evaluation's traffic kept per task and
configuration, then replayed and re-scored with the model server gone.

Every role the runs call is answered by the scripted Messages API server of the DABench-shaped
folder (one question answered right, one with a misread column).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import scripted_pools
from tests.support.fake_anthropic import FakeAnthropic
from tests.workers.evaluation.benchmark_folders import dabench_folder, script
from workers.evaluation.configurations import Configuration
from workers.evaluation.imports import import_dabench, write_suite
from workers.evaluation.runner import Evaluation
from workers.evaluation.traffic import Traffic
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    async with scripted_pools(dev_env.client, fresh_database_url, tmp_path / "assay",
                              task_queue, script) as served:
        yield served


@pytest.mark.timeout(900)
async def test_a_recorded_live_evaluation_replays_and_scores_the_same_without_the_server(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    dab = dabench_folder(tmp_path)
    suite = write_suite(import_dabench(dab), dab / "assay-suite.json")
    kept = tmp_path / "kept"
    live = Evaluation(suite, dab, settings=settings, live=True, parallel=2,
                      traffic=Traffic(record=kept))
    full = Configuration("full")
    recorded = await live.run_configuration(client, full, 1)
    assert [(s.task, s.passed) for s in recorded] == [("dabench-0", True),
                                                       ("dabench-1", False)]
    files = sorted(p.name for p in (kept / "full").iterdir())
    assert files == ["dabench-0.jsonl", "dabench-1.jsonl"]
    assert all((kept / "full" / f).read_text().count("\n") >= 3 for f in files)

    fake.stop()
    seen = len(fake.requests)
    said: list[str] = []
    offline = Evaluation(suite, dab, settings=settings, live=False, parallel=2,
                         traffic=Traffic(replay=kept), echo=said.append)
    replayed = await offline.run_configuration(client, full, 1)
    assert len(fake.requests) == seen  # every answer came from the kept traffic
    assert [(s.task, s.passed, s.held, s.missed) for s in replayed] == [
        (s.task, s.passed, s.held, s.missed) for s in recorded]
    assert all(s.calls > 0 for s in replayed)  # (memory may save one the recording has)

    # nothing was kept under another configuration: its goals are skipped, saying why
    ablated = await offline.run_configuration(client, Configuration("no-memory", ("memory",)),
                                              1)
    assert [(s.task, s.status) for s in ablated] == [("dabench-0", "skipped"),
                                                     ("dabench-1", "skipped")]
    assert all("no model key, and no recording" in s.skipped for s in ablated)
    assert sum("skipped: no model key" in line for line in said) == 2
