"""A worker process collects its young objects 20 000 at a time, its older ones as before."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import isolated_settings, pools_serving
from tests.support.waiting import wait_for
from workers.pools.collector import YOUNG_OBJECTS, pace
from workflows.contracts.pools import Pool


@pytest.fixture
def python_defaults() -> Iterator[tuple[int, int, int]]:
    """The process's thresholds set to Python's defaults for the test, and put back after."""
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_pace_raises_the_young_threshold_and_keeps_the_older_ones(
        python_defaults: tuple[int, int, int]) -> None:
    gc.set_threshold(700, 7, 3)
    pace()
    assert gc.get_threshold() == (YOUNG_OBJECTS, 7, 3)


async def test_serving_pools_paces_the_collector(python_defaults: tuple[int, int, int],
                                                 dev_env: WorkflowEnvironment,
                                                 fresh_database_url: str, tmp_path: Path,
                                                 task_queue: str) -> None:
    assert python_defaults[0] == 700
    settings = isolated_settings(tmp_path, task_queue)
    async with pools_serving(settings, fresh_database_url, dev_env.client,
                             pools=[Pool.ORCHESTRATION]):
        await wait_for(lambda: gc.get_threshold()[0] == YOUNG_OBJECTS, timeout=30,
                       what="the served pools to pace the collector")
    assert gc.get_threshold()[1:] == python_defaults[1:]
