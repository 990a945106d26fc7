"""Parts a run leans on, each beside a bare baseline measured in the same run.

- the artifact store: put and get through the local directory store and through the S3 store
  against moto's S3 server on localhost, beside a bare file copy;
- the run's timeline figure (Pillow) for 1 and 50 tasks, beside encoding a blank PNG of the
  same size;
- the researcher's documentation lookups (read from the package's files, never imported),
  beside ``inspect.getsource`` on an already imported function;
- starting a workflow's sandbox, as a worker does for each execution, without and with the
  workers' code cache (``workers/pools/codecache.py``), beside the floor's small workflow.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PIL import Image
from temporalio import workflow

from activities.artifacts.store import ArtifactStore, LocalArtifactStore
from activities.reports.timeline import WIDTH, draw_timeline
from activities.research.tool import DocsResearcher
from benchmarks.floor import FloorTaskWorkflow
from client.assay import DATA_CONVERTER
from tests.support.s3 import s3_server
from workers.pools import codecache
from workers.pools.runner import workflow_runner
from workflows.contracts.results import PhaseMark, RunReport, TaskResult
from workflows.research.workflow import ResearchWorkflow
from workflows.task.workflow import TaskWorkflow

REPEATS = 7
SANDBOX_REPEATS = 30


def median_ms(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Median wall time of ``fn`` over ``repeats`` calls, in milliseconds."""
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def store_rows(root: Path) -> list[tuple[str, float, float, float]]:
    """(back-end, put 1 MB ms, get 1 MB ms, put+get 100 x 1 kB ms) per store, and bare copy."""
    big = root / "big.bin"
    big.write_bytes(os.urandom(1 << 20))
    small: list[Path] = []
    for n in range(100):
        path = root / "small" / f"{n}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(1024))
        small.append(path)

    def measure(name: str, store: ArtifactStore) -> tuple[str, float, float, float]:
        digest = store.put(big).sha256
        out = root / "out"
        out.mkdir(exist_ok=True)

        def get() -> None:
            (out / "big").unlink(missing_ok=True)
            store.fetch(digest, out / "big")

        def many() -> None:
            for path in small:
                stored = store.put(path)
                (out / path.name).unlink(missing_ok=True)
                store.fetch(stored.sha256, out / path.name)

        return (name, median_ms(lambda: store.put(big)), median_ms(get),
                median_ms(many, repeats=3))

    def bare() -> tuple[str, float, float, float]:
        target = root / "copy"
        return ("bare file copy", median_ms(lambda: shutil.copyfile(big, target)),
                median_ms(lambda: shutil.copyfile(target, root / "copy2")),
                median_ms(lambda: [shutil.copyfile(p, root / "copy3") for p in small],
                          repeats=3))

    rows = [bare(), measure("local directory store", LocalArtifactStore(root / "store"))]
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto logs every request
    with s3_server() as server:
        rows.append(measure("S3 store (moto, localhost)", server.store("bench")))
    return rows


def report_of(tasks: int) -> RunReport:
    """A finished run of ``tasks`` tasks, each through review, execution and verification."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    results: list[TaskResult] = []
    for n in range(tasks):
        begun = start + timedelta(seconds=n)
        marks = [PhaseMark(phase=p, at=begun + timedelta(seconds=s))
                 for p, s in (("review", 1), ("execute", 2), ("verify", 4), ("done", 5))]
        results.append(TaskResult(task_id=f"task-{n}", status="completed", status_reason="ok",
                                  phases=marks, started_at=begun,
                                  finished_at=begun + timedelta(seconds=5)))
    return RunReport(run_id="bench", plan_name="bench", plan_sha256="0" * 64,
                     status="completed", timestamp="20260101_000000", started_at=start,
                     finished_at=start, tasks=results)


def figure_rows(root: Path) -> list[tuple[str, float, float]]:
    """(case, timeline ms, blank PNG of the same size ms)."""
    rows: list[tuple[str, float, float]] = []
    for tasks in (1, 50):
        report = report_of(tasks)
        folder = root / f"figure-{tasks}"
        draw_timeline(report, folder)  # fonts load once per process
        with Image.open(folder / "figures" / "timeline.png") as drawn:
            size = drawn.size
        blank = Image.new("RGB", size, "white")
        rows.append((f"{tasks} task{'s' if tasks > 1 else ''} ({WIDTH}x{size[1]} px)",
                     median_ms(lambda r=report, f=folder: draw_timeline(r, f)),
                     median_ms(lambda b=blank: b.save(root / "blank.png", format="PNG"))))
    return rows


def lookup_rows() -> list[tuple[str, float, int, float]]:
    """(target, lookup ms, answer characters, inspect.getsource ms or -1)."""
    researcher = DocsResearcher()
    rows: list[tuple[str, float, int, float]] = []
    for target, imported in (("statistics.median", statistics.median),
                             ("numpy.polyfit", None), ("numpy.linalg.lstsq", None),
                             ("nothing.such_name", None)):
        answer, _ = researcher.answer("lookup_docs", {"target": target})
        bare = median_ms(lambda f=imported: inspect.getsource(f)) if imported else -1.0
        rows.append((target, median_ms(
            lambda t=target: researcher.answer("lookup_docs", {"target": t})),
            len(answer), bare))
    return rows


def sandbox_rows() -> list[tuple[str, float, float]]:
    """Median ms to start each workflow's sandbox: without the code cache, then with it."""

    async def rows() -> list[tuple[str, float, float]]:
        runner = workflow_runner(DATA_CONVERTER)  # the pools' own (workers/pools/runner.py)
        found: list[tuple[str, float, float]] = []
        for cls in (ResearchWorkflow, TaskWorkflow, FloorTaskWorkflow):
            defn = workflow._Definition.must_from_class(cls)  # pyright: ignore[reportPrivateUsage]
            times: list[float] = []
            for cached in (False, True):
                sys.meta_path[:] = [f for f in sys.meta_path
                                    if not isinstance(f, codecache.CodeCache)]
                if cached:
                    codecache.install()
                runner.prepare_workflow(defn)  # a first start fills the cache
                times.append(median_ms(lambda d=defn: runner.prepare_workflow(d),
                                       SANDBOX_REPEATS))
            found.append((cls.__name__, times[0], times[1]))
        return found

    return asyncio.run(rows())


def run() -> None:
    """Print every table."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"   {'artifact store':28}{'put 1 MB':>12}{'get 1 MB':>12}"
              f"{'100 x 1 kB put+get':>22}")
        for name, put, get, many in store_rows(root):
            print(f"   {name:28}{put:9.2f} ms{get:9.2f} ms{many:19.1f} ms")
        print(f"   {'timeline figure':34}{'drawn (Pillow)':>16}{'blank PNG':>12}")
        for case, drawn, blank in figure_rows(root):
            print(f"   {case:34}{drawn:13.2f} ms{blank:9.2f} ms")
    print(f"   {'documentation lookup':24}{'lookup':>10}{'answer':>12}"
          f"{'inspect.getsource':>20}")
    for target, ms, chars, bare in lookup_rows():
        shown = f"{bare:17.2f} ms" if bare >= 0 else f"{'-':>20}"
        print(f"   {target:24}{ms:7.2f} ms{chars:7d} chars{shown}")
    print(f"   {'workflow sandbox start':24}{'no cache':>12}{'code cache':>12}  (Python "
          f"{'may not' if sys.dont_write_bytecode else 'may'} write bytecode here)")
    for name, without, cached in sandbox_rows():
        print(f"   {name:24}{without:9.2f} ms{cached:9.2f} ms")
