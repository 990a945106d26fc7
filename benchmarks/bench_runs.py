"""Latency and throughput of a one-task Assay run against a bare workflow, same server.

Both run on one embedded temporal dev server (SQLite file with WAL, as `assay up` runs it),
with real workers: the Assay run goes through the full pipeline (event store on embedded
PostgreSQL, sandboxed job, evidence verification, report files). The same run is measured
without learning too (memory and skills off: no look-up before its task, no hand-off after,
no work for the library), and every burst reports the CPU each process spent per run
(:mod:`benchmarks.cpu`): on two cores, that is what bounds throughput.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.learning.settle import wait_learned
from benchmarks.bare import BareWorkflow, bare_echo
from benchmarks.breakdown import ActivityClock, Breakdown, add_run
from benchmarks.floor import (
    FLOOR_QUEUES,
    FloorLibraryWorkflow,
    FloorShape,
    FloorTaskWorkflow,
    FloorWorkflow,
    floor_hand_off,
    floor_job,
    floor_local,
    floor_noop,
)
from benchmarks.measuring import measure, measure_rounds
from client.assay import DATA_CONVERTER
from client.runs import start_attributes
from workers.cli.show import load_report
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres
from workers.stack.temporal import DEV_SERVER_TUNING, dev_server_flags
from workflows.constants import run_workflow_id
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.pools import Pool
from workflows.contracts.results import ResearchInput, ResearchResult
from workflows.research.workflow import ResearchWorkflow

BARE_QUEUE = "bench-bare"
ROUNDS = 2
"""Bursts of each variant of the run, taken in turns (``benchmarks/measuring.py``)."""
CLI_COMMANDS = ("assay --help", "assay status RUN")
"""The commands whose start-to-exit time section 1 measures."""


def one_task_plan(seconds: float = 0.0) -> Plan:
    """A plan of one task whose job (after ``seconds`` of sleep) writes its evidence.

    The job writes its JSON itself: importing ``json`` (with ``re``, ``enum`` and more) costs
    a fresh interpreter some 13 ms of CPU here, which is the job's own code, not Assay's, and
    the floor's job runs ``pass``.
    """
    wait = f"import time\ntime.sleep({seconds})\n" if seconds else ""
    code = wait + "open('metrics.json', 'w').write('{\"ok\": 1}')\n"
    return Plan.model_validate({"decisions": [{
        "task_id": "1", "priority": "HIGH", "action": "benchmark task",
        "acceptance_criteria": ["ok"],
        "job": {"code": code, "source": code, "filename": "job.py",
                "resources": {"timeout_s": max(60.0, 2 * seconds)},
                "expected_artifacts": ["metrics.json"], "expected_metrics": ["ok"]},
        "checks": [{"metric": "ok", "op": "==", "value": 1}],
    }]})


def job_time(result: ResearchResult, field: str = "duration_s") -> float:
    """Seconds the one task's job ran in the sandbox (``cpu_s``: the CPU seconds of its
    process tree, from its cgroup), from the report the run wrote."""
    report = load_report(result)
    execution = report.tasks[0].execution if report is not None else None
    return float(getattr(execution, field)) if execution else 0.0


def unlearning() -> RunPolicy:
    """The policy of a run that neither consults nor feeds memory and the skill library."""
    return RunPolicy.model_validate({"memory": {"enabled": False},
                                     "skills": {"enabled": False}})


async def bench(latency_n: int = 20, concurrent_n: int = 100,
                long_s: float = 60.0) -> dict[str, Any]:
    """Run both measurements on one server and return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
            dev_server_existing_path=str(Path(__import__("sys").executable).parent / "temporal"),
            data_converter=DATA_CONVERTER, ui=False,
            dev_server_extra_args=dev_server_flags(root / "temporal.db"))
        pg = EmbeddedPostgres(root / "pg")
        pg.start()
        pg.ensure_database("assay")
        try:
            figures = await _bench_on(env.client, root, pg.url("assay"), latency_n, concurrent_n,
                                      long_s, pg.pid)
        finally:
            await env.shutdown()
            pg.stop()
        figures["bare_untuned"] = await untuned_bare(root / "untuned.db", latency_n,
                                                     concurrent_n)
        return figures


async def untuned_bare(db_file: Path, latency_n: int, concurrent_n: int) -> dict[str, float]:
    """The bare workflow on a dev server like the others but with Temporal's default queue
    reads (``DEV_SERVER_TUNING`` left out): what the tuning is worth."""
    flags, tuning = dev_server_flags(db_file), len(DEV_SERVER_TUNING)
    assert tuple(flags[-tuning:]) == DEV_SERVER_TUNING  # the tuning comes last
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=str(Path(__import__("sys").executable).parent / "temporal"),
        data_converter=DATA_CONVERTER, ui=False,
        dev_server_extra_args=flags[:-tuning])
    try:
        async with Worker(env.client, task_queue=BARE_QUEUE, workflows=[BareWorkflow],
                          activities=[bare_echo]):
            return await measure("bare", lambda: env.client.execute_workflow(
                BareWorkflow.run, "x", id=f"bare-{uuid.uuid4()}", task_queue=BARE_QUEUE),
                latency_n=latency_n, concurrent_n=concurrent_n)
    finally:
        await env.shutdown()


async def _bench_on(client: Client, root: Path, db_url: str, latency_n: int,
                    concurrent_n: int, long_s: float, pg_pid: int | None) -> dict[str, Any]:
    settings = Settings(data_dir=root / "assay", max_concurrent_jobs=8)
    stop = asyncio.Event()
    clock = ActivityClock()  # Assay's workers time their local activities for the breakdown
    config = client.config()
    config["interceptors"] = [clock]
    timed = Client(**config)
    pools = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                          database_url=db_url, stop=stop, client=timed))
    plan = one_task_plan()
    finished: dict[str, list[ResearchResult]] = {"unlearning": [], "assay": []}

    async def bare() -> object:
        return await client.execute_workflow(BareWorkflow.run, "x", id=f"bare-{uuid.uuid4()}",
                                             task_queue=BARE_QUEUE)

    async def assay(plan: Plan = plan, policy: RunPolicy | None = None,
                    kept: list[ResearchResult] | None = None) -> ResearchResult:
        run_id = run_workflow_id("bench", uuid.uuid4().hex)
        req = ResearchInput(run_id=run_id, plan_name="bench", plan_sha256="0" * 64, plan=plan,
                            queues=Queues(), policy=policy or RunPolicy())
        result = await client.execute_workflow(ResearchWorkflow.run, req, id=run_id,
                                               task_queue=Pool.ORCHESTRATION.value,
                                               search_attributes=start_attributes(req))
        assert result.status == "completed", result.tasks[0].status_reason
        if kept is not None:
            kept.append(result)
        return result

    floors: list[str] = []  # the plain floor's runs, in order

    async def floor(shape: FloorShape | None = None) -> object:
        run_id = f"floor-{uuid.uuid4()}"
        if shape is None:
            floors.append(run_id)
        return await client.execute_workflow(FloorWorkflow.run, shape or FloorShape(),
                                             id=run_id, task_queue=FLOOR_QUEUES["orchestration"])

    learned = 0  # Assay's runs with learning whose outcomes the library has taken

    async def settle(name: str) -> None:
        """After Assay's runs with learning, wait for the library to learn from them: its work
        would otherwise fall in the next variant's runs."""
        nonlocal learned
        if name == "assay":
            runs, learned = finished["assay"][learned:], len(finished["assay"])
            await wait_learned(client, settings.queue(Pool.SKILLS),
                               [f"{r.run_id}/{r.tasks[0].task_id}" for r in runs], limit_s=60)

    try:
        async with contextlib.AsyncExitStack() as baselines:
            for worker in [Worker(client, task_queue=BARE_QUEUE, workflows=[BareWorkflow],
                                  activities=[bare_echo]), *floor_workers(client)]:
                await baselines.enter_async_context(worker)
            figures: dict[str, Any] = {"bare": await measure(
                "bare", bare, latency_n=latency_n, concurrent_n=concurrent_n)}
            quiet = unlearning()
            figures.update(await measure_rounds({
                "floor": floor,
                "floor_learning": lambda: floor(FloorShape(learn=True)),
                "floor_marked": lambda: floor(FloorShape(learn=True, attributes=True)),
                "unlearning": lambda: assay(plan, quiet, finished["unlearning"]),
                "assay": lambda: assay(kept=finished["assay"]),
            }, latency_n=latency_n, concurrent_n=concurrent_n, rounds=ROUNDS, pg_pid=pg_pid,
                settle=settle))
            for name in ("unlearning", "assay"):
                _cgroup_jobs(figures[name], finished[name][latency_n + 1:])
            sequential = finished["assay"][1:latency_n + 1]  # the latency runs, not the bursts
            figures["assay"]["job_ms"] = statistics.median(map(job_time, sequential)) * 1000
            breakdown = Breakdown()
            for result in sequential:
                await add_run(client, result.run_id, breakdown, clock)
            figures["breakdown"] = breakdown
            figures["floor_breakdown"] = floor_breakdown = Breakdown()
            for run_id in floors[1:latency_n + 1]:  # its latency runs, as for Assay
                await add_run(client, run_id, floor_breakdown)
            figures["burst"] = await _kept(client, db_url, finished["assay"][-concurrent_n:],
                                           concurrent_n)
            figures["cli"] = await cli_times(client, sequential[0].run_id)
            if long_s > 0:
                start = time.perf_counter()
                result = await assay(one_task_plan(long_s))
                wall = time.perf_counter() - start
                figures["long"] = {"wall_s": wall, "job_s": job_time(result),
                                   "overhead_s": wall - job_time(result)}
    finally:
        stop.set()
        await pools
    return figures


def _cgroup_jobs(figures: dict[str, Any], burst: list[ResearchResult]) -> None:
    """A sandboxed job's CPU as its cgroup measured it: bubblewrap's pid namespace keeps the
    job's own process from the worker's rusage of reaped children."""
    figures["cpu"]["jobs"] = 1000 * statistics.fmean(job_time(r, "cpu_s") for r in burst)


def floor_workers(client: Client) -> list[Worker]:
    """Workers for the floor's queues: its workflows and local activities, its remote ones,
    its library."""
    def worker(pool: str, queue: str) -> Worker:
        if pool == "orchestration":
            return Worker(client, task_queue=queue, workflows=[FloorWorkflow, FloorTaskWorkflow],
                          activities=[floor_local, floor_hand_off])
        if pool == "skills":
            return Worker(client, task_queue=queue, workflows=[FloorLibraryWorkflow])
        return Worker(client, task_queue=queue, activities=[floor_noop, floor_job])
    return [worker(pool, queue) for pool, queue in FLOOR_QUEUES.items()]


async def _kept(client: Client, db_url: str, burst: list[ResearchResult],
                expected: int) -> dict[str, int]:
    """Count what the concurrent runs left: completed runs, and the events each recorded."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    completed = 0
    for result in burst:
        described = await client.get_workflow_handle(result.run_id).describe()
        completed += described.status is not None and described.status.name == "COMPLETED"
    engine = create_async_engine(db_url)
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(text(
                "SELECT run_id, count(*) AS n FROM execution_events "
                "WHERE run_id = ANY(:ids) GROUP BY run_id"),
                {"ids": [r.run_id for r in burst]})).all()
    finally:
        await engine.dispose()
    counts = [int(n) for _, n in rows]
    return {"started": expected, "completed": completed, "with_events": len(counts),
            "events_min": min(counts, default=0), "events_max": max(counts, default=0)}


async def cli_times(client: Client, run_id: str, repeat: int = 5,
                    labels: tuple[str, ...] = CLI_COMMANDS) -> dict[str, float]:
    """Median wall milliseconds of ``assay --help`` and ``assay status RUN`` (a finished run
    on this server), each a fresh process as a person runs it.

    A first run of each is not counted: it caches the project's bytecode, as Python does by
    default (``PYTHONDONTWRITEBYTECODE`` is dropped for these processes).
    """
    import os
    import sys

    target = client.service_client.config.target_host
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["ASSAY_TEMPORAL_ADDRESS"] = target
    assay = str(Path(sys.executable).parent / "assay")
    commands = {"assay --help": ["--help"], "assay status RUN": ["status", run_id]}
    times: dict[str, float] = {}
    for label in labels:
        samples: list[float] = []
        for _ in range(repeat + 1):
            start = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(
                assay, *commands[label], env=env, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE)
            _, err = await proc.communicate()
            samples.append((time.perf_counter() - start) * 1000)
            assert proc.returncode == 0, err.decode()[-500:]
        times[label] = statistics.median(samples[1:])
    return times
