"""A one-task run without a process for its job: Assay's orchestration against the floor's.

Section 1 measures Assay whole against the floor, whose job is ``python -S -c pass`` and whose
other activities and local activities do nothing. This measures the two with the job's
process taken out of both, on one dev server: the floor with ``spawn=False``, and Assay's real
workflows, reviewers, verifier and report writer over the workflow tests' in-process sandbox
(a job only writes its files), with the events and the learner's hand-offs kept in memory
(``tests.workflows.harness``: every pool on one task queue). What is left between the ratios
of the two sections is what the design's isolation and durable stores cost: the sandboxed job,
the event store in PostgreSQL and the learning after each task.

Assay runs three times: with the workflow runner its pools use (``workers.pools.runner``), with
the SDK's own sandbox, and with no workflow sandbox at all, each on a worker of its own, so
that what the runner saves and what the sandbox itself costs are measured in the same run, in
turns with the floor (``benchmarks/measuring.py``: a drift of the machine reaches all four
alike). Assay does not run its workflows unsandboxed: the sandbox is what turns a call that
would break replay (a clock, a random number, a file read) into an error at once rather than a
history that no longer replays.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities.reports.writer import ReportWriter
from benchmarks.bench_runs import ROUNDS, floor_workers
from benchmarks.floor import FLOOR_QUEUES, FloorShape, FloorWorkflow
from benchmarks.measuring import measure_rounds
from client.assay import DATA_CONVERTER
from client.runs import start_attributes
from tests.workflows.harness import Harness, task
from workers.pools import codecache
from workers.stack.temporal import dev_server_flags
from workflows.research.workflow import ResearchWorkflow


async def run(latency_n: int = 20, concurrent_n: int = 100) -> dict[str, dict[str, Any]]:
    """Latency, throughput and CPU per run of the floor without its process and of Assay
    without one (``assay``; ``assay_sdk_runner``: with the SDK's own workflow sandbox;
    ``assay_unsandboxed``: with no workflow sandbox at all, what the sandbox costs)."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        root = Path(tmp)
        env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
            dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
            data_converter=DATA_CONVERTER, search_attributes=[], ui=False,
            dev_server_extra_args=dev_server_flags())
        try:
            return await _measure(env, root, latency_n, concurrent_n)
        finally:
            await env.shutdown()


async def _measure(env: WorkflowEnvironment, root: Path, latency_n: int,
                   concurrent_n: int) -> dict[str, dict[str, Any]]:
    client = env.client
    writer = ReportWriter(root / "runs")

    def harness(name: str, runner: WorkflowRunner | None) -> Harness:
        return Harness(env, f"bench-{name}-{uuid.uuid4().hex[:8]}", root / name, large=True,
                       overrides={"write_report": writer.write_report,
                                  "write_task_report": writer.write_task_report},
                       runner=runner)

    ours, sdks = harness("assay", None), harness("sdk", SandboxedWorkflowRunner())
    bare = harness("unsandboxed", UnsandboxedWorkflowRunner())

    def assay(on: Harness) -> Callable[[], Awaitable[object]]:
        async def one() -> object:
            req = on.request([task("1")])
            result = await client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=on.queue,
                                                   search_attributes=start_attributes(req))
            assert result.status == "completed", result.status_reason
            return result
        return one

    async def floor() -> object:
        return await client.execute_workflow(
            FloorWorkflow.run, FloorShape(spawn=False), id=f"floor-{uuid.uuid4()}",
            task_queue=FLOOR_QUEUES["orchestration"])

    codecache.install()  # as a pool's worker does (workers/pools/builders.py: serve_specs)
    async with contextlib.AsyncExitStack() as workers:
        for worker in floor_workers(client):
            await workers.enter_async_context(worker)
        await workers.enter_async_context(ours.worker())
        await workers.enter_async_context(sdks.worker())
        await workers.enter_async_context(bare.worker())
        return await measure_rounds(
            {"floor": floor, "assay_sdk_runner": assay(sdks), "assay_unsandboxed": assay(bare),
             "assay": assay(ours)},
            latency_n=latency_n, concurrent_n=concurrent_n, rounds=ROUNDS)
