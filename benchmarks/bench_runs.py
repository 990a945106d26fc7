"""Latency and throughput of a one-task Assay run against a bare workflow, same server.

Both run on one embedded temporal dev server (SQLite file with WAL, as `assay up` runs it),
with real workers: the Assay run goes through the full pipeline (event store on embedded
PostgreSQL, sandboxed job, evidence verification, report files).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from benchmarks.bare import BareWorkflow, bare_echo
from workers.cli.show import load_report
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres
from workflows.client import DATA_CONVERTER
from workflows.constants import SEARCH_ATTRIBUTES, Pool, run_workflow_id
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues
from workflows.contracts.results import ResearchInput, ResearchResult
from workflows.research.workflow import ResearchWorkflow

BARE_QUEUE = "bench-bare"


def one_task_plan() -> Plan:
    """A plan of one task whose job does nothing but write its evidence."""
    code = "import json\njson.dump({'ok': 1}, open('metrics.json', 'w'))\n"
    return Plan.model_validate({"decisions": [{
        "task_id": "1", "priority": "HIGH", "action": "benchmark task",
        "acceptance_criteria": ["ok"],
        "job": {"code": code, "source": code, "filename": "job.py",
                "expected_artifacts": ["metrics.json"], "expected_metrics": ["ok"]},
        "checks": [{"metric": "ok", "op": "==", "value": 1}],
    }]})


def job_time(result: ResearchResult) -> float:
    """Seconds the one task's job ran in the sandbox, from the report the run wrote."""
    report = load_report(result)
    execution = report.tasks[0].execution if report is not None else None
    return execution.duration_s if execution else 0.0


async def timed(fn: Callable[[], Awaitable[object]]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def measure(name: str, one: Callable[[], Awaitable[object]], *, latency_n: int,
                  concurrent_n: int) -> dict[str, float]:
    """Median latency over sequential calls, then throughput of concurrent calls."""
    await one()  # warm-up
    latencies = [await timed(one) for _ in range(latency_n)]
    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(concurrent_n)))
    elapsed = time.perf_counter() - start
    return {"median_ms": statistics.median(latencies) * 1000,
            "p95_ms": sorted(latencies)[int(0.95 * (latency_n - 1))] * 1000,
            "throughput_per_s": concurrent_n / elapsed}


async def bench(latency_n: int = 20, concurrent_n: int = 100) -> dict[str, dict[str, float]]:
    """Run both measurements on one server and return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
            dev_server_existing_path=str(Path(__import__("sys").executable).parent / "temporal"),
            data_converter=DATA_CONVERTER, ui=False,
            dev_server_extra_args=[
                "--db-filename", str(root / "temporal.db"),
                "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=1",
                *(a for n, k in SEARCH_ATTRIBUTES.items() for a in ("--search-attribute",
                                                                      f"{n}={k}")),
            ])
        pg = EmbeddedPostgres(root / "pg")
        pg.start()
        pg.ensure_database("assay")
        try:
            return await _bench_on(env.client, root, pg.url("assay"), latency_n, concurrent_n)
        finally:
            await env.shutdown()
            pg.stop()


async def _bench_on(client: Client, root: Path, db_url: str, latency_n: int,
                    concurrent_n: int) -> dict[str, dict[str, float]]:
    settings = Settings(data_dir=root / "assay", max_concurrent_jobs=8)
    stop = asyncio.Event()
    pools = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                          database_url=db_url, stop=stop, client=client))
    plan = one_task_plan()
    finished: list[ResearchResult] = []

    async def bare() -> object:
        return await client.execute_workflow(BareWorkflow.run, "x", id=f"bare-{uuid.uuid4()}",
                                             task_queue=BARE_QUEUE)

    async def assay() -> object:
        run_id = run_workflow_id("bench", uuid.uuid4().hex)
        req = ResearchInput(run_id=run_id, plan_name="bench", plan_sha256="0" * 64, plan=plan,
                            queues=Queues())
        result = await client.execute_workflow(ResearchWorkflow.run, req, id=run_id,
                                               task_queue=Pool.ORCHESTRATION.value)
        assert result.status == "completed", result.tasks[0].status_reason
        finished.append(result)
        return result

    try:
        async with Worker(client, task_queue=BARE_QUEUE, workflows=[BareWorkflow],
                          activities=[bare_echo]):
            figures = {"bare": await measure("bare", bare, latency_n=latency_n,
                                             concurrent_n=concurrent_n)}
            figures["assay"] = await measure("assay", assay, latency_n=latency_n,
                                             concurrent_n=concurrent_n)
            sequential = finished[:latency_n + 1]  # warm-up + latency runs, not the burst
            figures["assay"]["job_ms"] = statistics.median(map(job_time, sequential)) * 1000
    finally:
        stop.set()
        await pools
    return figures
