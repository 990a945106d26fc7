"""Memory's task-type look-ups: the in-process engine against qdrant-client's local mode.

1 000 task types (the actions of ``make_library(1000)``) are written as an earlier release
wrote them, into local mode's storage; the shard carries them over on its first open. Both
then answer the same 300 actions (``TaskTypeIndex.similar``), one at a time as memory asks;
the answers are compared, and the medians printed side by side with the opening times.

Run: ``python -m benchmarks.bench_lookups``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import TypedDict

from qdrant_client import QdrantClient

from activities.memory.index import TaskTypeIndex
from tests.data.skills.library import make_library
from tests.support.local_mode import as_local_mode_answered, by_name_in_ties, write_local_mode


class LookupFigures(TypedDict):
    """Milliseconds of both indexes over the same task types, and whether they agreed."""

    types: int
    asked: int
    local_open_ms: float
    carry_ms: float
    shard_open_ms: float
    local_median_ms: float
    shard_median_ms: float
    same_answers: int
    same_but_ties: int
    """Answers equal once local mode's exact ties are ordered by name, as the shard orders."""
    same_scores: int
    """Answers with the same scores in the same order (which of more than five equals: may
    differ)."""


Answer = list[tuple[str, float]]


async def answers(index: TaskTypeIndex, asked: list[str], *,
                  before: bool) -> tuple[list[float], list[Answer]]:
    """Each look-up's milliseconds and answer, as memory asks now or asked ``before``."""
    took: list[float] = []
    found: list[Answer] = []
    for action in asked:
        start = time.perf_counter()
        found.append(as_local_mode_answered(index, action, 0.5) if before
                     else await index.similar(action, min_score=0.5))
        took.append((time.perf_counter() - start) * 1000)
    return took, found


async def measure(root: Path, types: int = 1000, asked: int = 300) -> LookupFigures:
    """Both indexes over ``types`` task types, asked ``asked`` actions."""
    actions = [skill.pattern.description for skill in make_library(types)]
    questions = [a.replace("the ", "") for a in actions[:asked]]
    write_local_mode(root, actions)
    start = time.perf_counter()
    shard = TaskTypeIndex.in_directory(root)  # carries the points over
    carry_ms = (time.perf_counter() - start) * 1000
    shard.close()
    start = time.perf_counter()
    shard = TaskTypeIndex.in_directory(root)
    shard_open_ms = (time.perf_counter() - start) * 1000
    new_ms, new = await answers(shard, questions, before=False)
    shard.close()
    start = time.perf_counter()
    client = QdrantClient(path=str(root))
    local_open_ms = (time.perf_counter() - start) * 1000
    old_ms, old = await answers(TaskTypeIndex.on_client(client), questions, before=True)
    client.close()
    return LookupFigures(
        types=types, asked=asked, local_open_ms=local_open_ms, carry_ms=carry_ms,
        shard_open_ms=shard_open_ms, local_median_ms=statistics.median(old_ms),
        shard_median_ms=statistics.median(new_ms),
        same_answers=sum(a == b for a, b in zip(old, new, strict=True)),
        same_but_ties=sum(by_name_in_ties(a) == b for a, b in zip(old, new, strict=True)),
        same_scores=sum([s for _, s in a] == [s for _, s in b]
                        for a, b in zip(old, new, strict=True)))


def run() -> LookupFigures:
    """Measure and print both indexes."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-lookups-") as tmp:
        figures = asyncio.run(measure(Path(tmp)))
    local, shard = figures["local_median_ms"], figures["shard_median_ms"]
    print(f"   memory's task-type look-up, {figures['types']:,} types, {figures['asked']} "
          f"actions: local mode (before) median {local:.2f} ms, in-process shard "
          f"{shard:.2f} ms ({local / shard:.0f}x); opening: local mode "
          f"{figures['local_open_ms']:.0f} ms, shard {figures['shard_open_ms']:.0f} ms "
          f"(first open, carrying local mode's points over: {figures['carry_ms']:.0f} ms); "
          f"same answers: {figures['same_answers']}/{figures['asked']}, "
          f"{figures['same_but_ties']}/{figures['asked']} with exact ties ordered by name, "
          f"{figures['same_scores']}/{figures['asked']} the same scores")
    return figures


if __name__ == "__main__":
    run()
