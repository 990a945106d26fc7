"""A run's result and history at scale: 4 tasks of 999 artifacts, 100 / 500 / 1 000 /
5 000 / 10 000 independent tasks and a chain of 200.

Each case runs the real ResearchWorkflow and TaskWorkflows, reviewers, verifier and report
writer on one temporal dev server, with the workflow tests' in-process sandbox (a job only
writes its files), so the figures are the orchestration's own: the run's result and the
largest event of its history against Temporal's 2 MiB payload limit, the history's size, the
report files written, the wall time per task and how long ``assay status`` takes on the
ended run. A run of over 1 000 tasks runs them in batches (``workflows.research.batches``):
its row gives the largest batch's history too, and every row a task's. A run whose
completion the server refuses
(the failure this guards against: it is retried for ever) is reported as ``wedged`` as soon
as its history shows two such refusals, and terminated.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.reports.writer import ReportWriter
from benchmarks.bench_runs import cli_times
from client.assay import DATA_CONVERTER
from tests.workflows.harness import Harness, task
from workers.stack.temporal import dev_server_flags
from workflows.constants import batch_workflow_id, task_workflow_id
from workflows.contracts.execution import Artifact, ExecuteJobInput, ExecutionOutcome
from workflows.research.workflow import ResearchWorkflow

CASES = {"4x999": (4, 999), "100": (100, 0), "500": (500, 0), "1000": (1000, 0),
         "5000": (5000, 0), "10000": (10000, 0), "chain200": (200, 0)}
"""Case name -> (tasks, declared artifacts per task; 0: the harness's one ``out.txt``); a
``chain`` case makes each task depend on the one before."""
WEDGED_AFTER = 2
"""Refused completions after which a run counts as wedged."""
DEADLOCK = "Potential deadlock detected"
"""How the SDK's deadlock detector's failure starts: a workflow task that took over 2 s (on a
loaded machine, any can), retried, not a refused completion."""


Execute = Callable[[ExecuteJobInput], Awaitable[ExecutionOutcome]]


def many_files(root: Path, count: int, store: LocalArtifactStore) -> Execute:
    """A sandbox whose jobs leave ``count`` small files each, put in ``store`` as the real
    sandbox puts what it hashed (the verifier reads evidence by digest from there)."""

    async def execute(req: ExecuteJobInput) -> ExecutionOutcome:
        workspace = root / req.run_id / req.task_id / "attempt-1"
        (workspace / "results").mkdir(parents=True, exist_ok=True)
        artifacts: list[Artifact] = []
        for i in range(count):
            path = workspace / "results" / f"table-part-{i:04d}-of-{count:04d}.csv"
            path.write_text(f"{req.task_id} {i}\n")
            store.put(path)
            artifacts.append(Artifact(name=str(path.relative_to(workspace)),
                                      size=path.stat().st_size, path=str(path),
                                      sha256=hashlib.sha256(path.read_bytes()).hexdigest()))
        return ExecutionOutcome(outcome="succeeded", exit_code=0, artifacts=artifacts,
                                metrics={"score": 0.9}, workspace=str(workspace))

    return execute


def plan(tasks: int, files: int, root: Path, *, chain: bool = False) -> list[dict[str, Any]]:
    """``tasks`` trivial tasks (independent, or each after the one before), each declaring
    its ``files`` artifacts."""
    decisions = [task(f"t{i:04d}", deps=[f"t{i - 1:04d}"] if chain and i else None)
                 for i in range(tasks)]
    if files:
        names = [f"results/table-part-{i:04d}-of-{files:04d}.csv" for i in range(files)]
        for decision in decisions:
            decision["job"]["expected_artifacts"] = names
    return decisions


async def settle(handle: WorkflowHandle[Any, Any]) -> tuple[str, int]:
    """``(status, result bytes)`` once the run completes, or ``("wedged", -1)``."""
    waiter = asyncio.ensure_future(handle.result())
    while not (await asyncio.wait([waiter], timeout=5))[0]:
        history = await handle.fetch_history()
        refused = sum(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
                      and DEADLOCK not in e.workflow_task_failed_event_attributes.failure.message
                      for e in history.events)  # a deadlock (a busy machine) is retried
        if refused >= WEDGED_AFTER:
            await handle.terminate("benchmark: completion refused, retried for ever")
            with contextlib.suppress(Exception):  # the terminated run's result is an error
                await waiter
            return "wedged", -1
    result = waiter.result()
    payload = (await DATA_CONVERTER.encode([result]))[0]
    return result.status, payload.ByteSize()


async def one(env: WorkflowEnvironment, root: Path, name: str) -> dict[str, Any]:
    """Run one case and return its figures."""
    tasks, files = CASES[name]
    writer = ReportWriter(root / "runs")
    overrides: dict[str, Callable[[Any], Awaitable[Any]]] = {
        "write_report": writer.write_report, "write_task_report": writer.write_task_report}
    if files:
        # the harness's sandbox root and store, where the verifier looks
        overrides["execute_job"] = many_files(root / "harness", files,
                                              LocalArtifactStore(root / "harness" / "store"))
    harness = Harness(env, f"bench-{uuid.uuid4().hex[:8]}", root / "harness",
                      overrides=overrides, large=True)  # as a pool worker: `Harness`
    req = harness.request(plan(tasks, files, root, chain=name.startswith("chain")),
                          max_parallel=8)
    run_id = req.run_id
    start = time.perf_counter()
    async with harness.worker():
        handle = await env.client.start_workflow(ResearchWorkflow.run, req, id=run_id,
                                                 task_queue=harness.queue)
        del req  # its decoded plan: no real worker's collector walks a client's objects
        status, result_bytes = await settle(handle)
        wall = time.perf_counter() - start
        status_ms = (await cli_times(env.client, run_id, repeat=3,
                                     labels=("assay status RUN",)))["assay status RUN"]
    events = (await handle.fetch_history()).events
    batches = [await _history(env, batch_workflow_id(run_id, n))
               for n in range(1, tasks // 500 + 2) if tasks > 1000]
    batches = [b for b in batches if b[0]]
    task_history = await _history(env, task_workflow_id(run_id, "t0000"))
    folder = root / "runs" / run_id
    reports = [p for p in folder.iterdir() if p.is_file()] if folder.exists() else []
    results_json = [p for p in reports if p.name.startswith("execution_results_")]
    return {"case": name, "status": status, "wall_s": wall,
            "per_task_ms": wall * 1000 / tasks, "result_bytes": result_bytes,
            "history_bytes": sum(e.ByteSize() for e in events), "events": len(events),
            "largest_event": max(e.ByteSize() for e in events),
            "batches": len(batches), "batch_events": max((b[0] for b in batches), default=0),
            "batch_bytes": max((b[1] for b in batches), default=0),
            "batch_largest_event": max((b[2] for b in batches), default=0),
            "batch_hand_back_s": max((b[3] for b in batches), default=0.0),
            "task_events": task_history[0], "task_bytes": task_history[1],
            "report_files": len(reports), "report_bytes": sum(p.stat().st_size for p in reports),
            "results_json_bytes": sum(p.stat().st_size for p in results_json),
            "rss_mb": rss_mb(), "status_ms": status_ms}


async def _history(env: WorkflowEnvironment,
                   workflow_id: str) -> tuple[int, int, int, float]:
    """(events, bytes, largest event's bytes, :func:`hand_back_s`) of a workflow's history;
    zeros if none."""
    try:
        events = (await env.client.get_workflow_handle(workflow_id).fetch_history()).events
    except RPCError:
        return 0, 0, 0, 0.0
    return (len(events), sum(e.ByteSize() for e in events), max(e.ByteSize() for e in events),
            hand_back_s(events))


def hand_back_s(events: Sequence[HistoryEvent]) -> float:
    """Seconds from a workflow's last child's end to its own: a batch handing back its
    results (the turns between parts: ``workflows.common.turns``); 0 with no child."""
    ended = [e.event_time.ToDatetime() for e in events
             if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED]
    if not ended:
        return 0.0
    return (events[-1].event_time.ToDatetime() - ended[-1]).total_seconds()


def rss_mb() -> float:
    """The resident memory of this process (workers and client), in MiB."""
    import os

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def run(names: list[str]) -> list[dict[str, Any]]:
    """Run the named cases on one dev server, printing each as it ends."""
    figures: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
            dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
            data_converter=DATA_CONVERTER, search_attributes=[], ui=False,
            dev_server_extra_args=dev_server_flags())
        try:
            for name in names:
                row = await one(env, Path(tmp) / name, name)
                figures.append(row)
                print("   " + "  ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in row.items()), flush=True)
        finally:
            await env.shutdown()
    return figures
