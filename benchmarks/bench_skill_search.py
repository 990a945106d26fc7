"""``assay skills search`` from a fresh process on a library of 1 000 skills, and its quality.

A throw-away embedded PostgreSQL holds ``make_library(1000)``; each search is a new
``python -m workers.cli skills search GOAL`` process, timed from its start to its exit (the
time to the first result a person waits for). The first search indexes the library into the
data directory; the next ones find that index and apply only the rows changed since. Then
the retrieval quality table of :mod:`benchmarks.retrieval`.

Run: ``python -m benchmarks.bench_skill_search``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

from benchmarks.retrieval import collection, labelled, print_quality, quality
from skills.store import SkillStore
from tests.data.skills.library import make_library
from workers.stack.embedded import EmbeddedPostgres
from workflows.contracts.policy import SkillPolicy

ROOT = Path(__file__).resolve().parent.parent
GOALS = ("profile the columns of a csv table", "read a FITS image",
         "fit a mixed-effects model", "compare two groups with a t-test")


class CliFigures(TypedDict):
    """Wall seconds of fresh ``assay skills search`` processes."""

    skills: int
    first_s: float
    warm_median_s: float
    warm_max_s: float
    help_s: float
    python_s: float
    """A fresh ``python -c pass``: the floor of any command."""
    memory_median_s: float
    """``assay memory rules``, a read of memory's store."""
    own_median_s: float
    """The search itself in a fresh process, its modules imported: index brought up to date,
    model loaded, query searched, the hits' rows read."""


async def searched_once(url: str, data_dir: str, goal: str) -> float:
    """Seconds of the CLI's search in this process, from an opened store to its hits."""
    from workers.cli.skill_search import IN_USE, index_dir, searched

    async with SkillStore(url) as store:
        start = time.perf_counter()
        await searched(store, index_dir(Path(data_dir).resolve(), store), goal, 5,
                       SkillPolicy().threshold, IN_USE)
        return time.perf_counter() - start


def own_time(env: dict[str, str], goal: str) -> float:
    """The search's own seconds (``searched_once``) in a fresh process."""
    code = ("import asyncio, os, sys; from benchmarks.bench_skill_search import searched_once; "
            "print(asyncio.run(searched_once(os.environ['ASSAY_DATABASE_URL'], "
            "os.environ['ASSAY_DATA_DIR'], sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, goal], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def timed(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one fresh CLI process with ``args``.

    Raises:
        RuntimeError: the command failed.
    """
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workers.cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"assay {' '.join(args)} failed: {done.stderr[-500:]}")
    return took


def bare_python(env: dict[str, str]) -> float:
    """Wall seconds of a fresh ``python -c pass``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


async def seed(url: str, n: int) -> None:
    """``n`` skills in the library at ``url``."""
    async with SkillStore(url) as store:
        await store.add_many(make_library(n), by="bench")


def cli_search(n: int, root: Path) -> CliFigures:
    """Time fresh search processes against a library of ``n`` skills."""
    pg = EmbeddedPostgres(root / "pg")
    pg.start()
    try:
        pg.ensure_database("bench")
        url = pg.url("bench")
        asyncio.run(seed(url, n))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(ASSAY_DATABASE_URL=url, ASSAY_DATA_DIR=str(root / "assay"),
                   PYTHONPATH=str(ROOT))
        timed(["--help"], env)  # bytecode cached, as after any first use
        help_s = statistics.median(timed(["--help"], env) for _ in range(3))
        python_s = statistics.median(bare_python(env) for _ in range(3))
        memory = [timed(["memory", "rules"], env) for _ in range(5)]
        first = timed(["skills", "search", GOALS[0]], env)
        warm = [timed(["skills", "search", goal], env) for goal in GOALS * 2]
        own = [own_time(env, goal) for goal in GOALS * 2]
    finally:
        pg.stop()
    return CliFigures(skills=n, first_s=first, warm_median_s=statistics.median(warm),
                      warm_max_s=max(warm), help_s=help_s, python_s=python_s,
                      memory_median_s=statistics.median(memory),
                      own_median_s=statistics.median(own))


def run(n: int = 1000) -> CliFigures:
    """Measure and print the CLI's times and the quality table."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-search-") as tmp:
        figures = cli_search(n, Path(tmp))
        print(f"   assay skills search, fresh process, {n:,} skills in PostgreSQL: first "
              f"search (indexes the library) {figures['first_s']:.2f} s; then median "
              f"{figures['warm_median_s']:.2f} s, max {figures['warm_max_s']:.2f} s to the "
              f"first result (assay --help: {figures['help_s']:.2f} s, python -c pass: "
              f"{figures['python_s']:.2f} s); the search itself (index updated, model loaded, "
              f"query, rows read): median {figures['own_median_s']:.2f} s; assay memory rules: "
              f"median {figures['memory_median_s']:.2f} s")
        print_quality(quality(Path(tmp) / "quality"), len(collection()), len(labelled()))
    return figures


if __name__ == "__main__":
    run()
