"""A worker process's heap is settled: what its start made is out of the collector's walk."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from workers.pools.heap import settle_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Leave the test process's heap as it was found (the frozen objects collectable again)."""
    yield
    gc.unfreeze()


def full_collection() -> tuple[int, float]:
    """How many objects a full collection walks now, and how long it takes."""
    start = time.perf_counter()
    gc.collect()
    return len(gc.get_objects()), time.perf_counter() - start


@pytest.mark.usefixtures("unfrozen")
def test_a_settled_heap_leaves_a_full_collection_only_what_came_after() -> None:
    made_at_start = [[i] for i in range(200_000)]  # a start's modules and tables
    walked, took = full_collection()
    frozen = settle_heap()
    assert frozen >= len(made_at_start)
    made_since = [[i] for i in range(1_000)]
    walked_after, took_after = full_collection()
    assert walked_after < len(made_since) + walked // 10
    assert took_after < took  # what a worker's pauses are made of
    assert made_at_start[-1] == [199_999]  # frozen, not freed
