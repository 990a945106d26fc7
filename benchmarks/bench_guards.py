"""Guards against huge or hostile input, timed beside the work each one spares.

The functional tests check what these guards answer; how long they take is measured here:

- the safety review of a 2 MB job source, refused as too large before it is parsed, beside
  ``ast.parse`` of the same source (bar: 500 ms);
- a skill search whose query is 1.4 MB of text, beside a one-line query on the same index
  (bar: 2 s);
- reading a collection of 150 generated skill folders (long bodies, ``references/`` of up to
  80 files) with four broken ones, beside reading the same files' bytes (bar: 60 s);
- the CLI refusing hostile plan files (deep nesting, a 64 MiB file, a 5 000-digit number),
  beside refusing a plan file that names no task (bar: 10 s each).

A search's own latency at 1 000 and 10 000 skills is :mod:`benchmarks.bench_skills`'.

Run: ``python -m benchmarks guards``.
"""

from __future__ import annotations

import ast
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path

from skills.folders.read import read_skills
from skills.index import SkillIndex, reformulate
from tests.activities.review.test_review_safety import review
from tests.skills.folders.test_collections import write_collection
from tests.skills.test_skill_index import skill
from tests.workers.cli.test_hostile_files import deep, huge, long_number

REPEATS = 5
Row = tuple[str, float, str, float, float]
"""What was timed and its median ms, the baseline and its median ms, the bar in ms."""


def median_ms(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Median wall time of ``fn`` over ``repeats`` calls, in milliseconds."""
    took: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took)


def review_row() -> Row:
    """The review's refusal of a 2 MB source, against parsing it."""
    code = "x = 1\n" * (2_000_000 // 6 + 1)
    return ("review of a 2 MB source", median_ms(lambda: review(code)),
            "ast.parse of it (once)", median_ms(lambda: ast.parse(code), 1), 500.0)


def search_row(root: Path) -> Row:
    """A 1.4 MB query against a one-line query, on an index of three skills."""
    with SkillIndex(root / "index") as index:
        index.upsert([skill("ausreisser", "Ausreißer in Messreihen mit dem Median markieren."),
                      skill("nihongo", "日本語のテキストの単語を数える。"),
                      skill("zscore", "Flag outliers by z-score.", context="outliers " * 400)])
        short = reformulate("flag outliers", 4)
        index.search(short, threshold=0.0)  # the model loaded, uncounted
        return ("search, a 1.4 MB query",
                median_ms(lambda: index.search(["flag outliers " * 100_000], threshold=0.0)),
                "a one-line query", median_ms(lambda: index.search(short, threshold=0.0)),
                2000.0)


def collection_row(root: Path) -> Row:
    """Reading a generated collection of skill folders, against reading its bytes."""
    write_collection(root)
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return ("read 154 skill folders", median_ms(lambda: read_skills(root), 3),
            "read their bytes", median_ms(lambda: [p.read_bytes() for p in files], 3), 60_000.0)


@contextmanager
def nowhere(root: Path) -> Generator[None]:
    """The CLI pointed at a port where nothing listens, and at a data directory of its own."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    before = {k: os.environ.get(k) for k in ("ASSAY_TEMPORAL_ADDRESS", "ASSAY_DATA_DIR")}
    os.environ.update(ASSAY_TEMPORAL_ADDRESS=f"127.0.0.1:{port}",
                      ASSAY_DATA_DIR=str(root / "assay"))
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def refusal_rows(root: Path) -> list[Row]:
    """``assay run`` refusing each hostile plan file, against refusing an empty plan."""
    from typer.testing import CliRunner

    from workers.cli.main import app

    runner = CliRunner()

    def refuse(plan: Path) -> Callable[[], object]:
        def run() -> None:
            result = runner.invoke(app, ["run", str(plan)])
            if result.exit_code != 2:
                raise RuntimeError(f"assay run {plan.name}: exit {result.exit_code}, not 2")
        return run

    empty = root / "empty.json"
    empty.write_text('{"decisions": []}')
    rows: list[Row] = []
    with nowhere(root):
        baseline = median_ms(refuse(empty))
        for name, write in (("10,000-level nesting", deep), ("64 MiB", huge),
                            ("5,000-digit number", long_number)):
            plan = root / f"{write.__name__}.json"
            write(plan)
            rows.append((f"refuse a plan: {name}", median_ms(refuse(plan)),
                         "refuse an empty plan", baseline, 10_000.0))
    return rows


def run() -> list[Row]:
    """Measure and print every guard beside its baseline; returns the rows."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-guards-") as tmp:
        root = Path(tmp)
        (root / "collection").mkdir()
        rows = [review_row(), search_row(root), collection_row(root / "collection"),
                *refusal_rows(root)]
    print(f"   {'guarded':34}{'ms':>10}   {'baseline':24}{'ms':>10}{'bar ms':>10}")
    for name, ms, base_name, base_ms, bar in rows:
        print(f"   {name:34}{ms:10.1f}   {base_name:24}{base_ms:10.1f}{bar:10.0f}"
              f"{'' if ms <= bar else '  OVER THE BAR'}")
    return rows


if __name__ == "__main__":
    run()
