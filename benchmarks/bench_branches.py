"""Branches on a real stack: how fast one starts, and what a sweep from a checkpoint saves.

One temporal dev server, embedded PostgreSQL and every served pool in this process (the real
sandbox), as ``benchmarks.bench_memory.started_stack`` sets them up. The plan is two tasks:
``data`` simulates a dataset (each of 300 points' noise is the mean of 18 000 seeded draws,
about 1.5 s of CPU in the sandbox) and ``fit`` fits a line to it by gradient descent with a
learning rate ``lr``. A sweep branches ``fit`` at its ``execute`` checkpoint, so ``data`` is
reused by reference; three fresh runs of the same variants each simulate the data again.
What ran, and its CPU time, is read from the task workflows' histories (``execute_job``).
The history sizes of a 20-branch sweep come from ``tests.workflows.research.sweeps``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, RPCError, WorkflowExecutionDescription
from temporalio.testing import WorkflowEnvironment

from benchmarks.bench_memory import Stack, started_stack
from client.assay import DATA_CONVERTER
from client.steering import SteeringClient
from tests.support.waiting import wait_for
from tests.workflows.research import sweeps
from workers.stack.temporal import dev_server_flags
from workflows.catalogue import EXECUTE_JOB
from workflows.constants import (
    branch_task_workflow_id,
    branch_workflow_id,
    task_workflow_id,
)
from workflows.contracts.alternatives import BranchSpec
from workflows.contracts.branches import BranchRequest, SteerRequest
from workflows.contracts.plan import Plan
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchInput

DATA_CODE = """import argparse, json, random
p = argparse.ArgumentParser()
for name in ("rows", "draws", "seed"):
    p.add_argument(f"--{name}", type=int)
a = p.parse_args()
rng = random.Random(a.seed)
rows = []
for i in range(a.rows):
    x = i / a.rows
    noise = 0.3 * sum(rng.gauss(0, 1) for _ in range(a.draws)) / a.draws ** 0.5
    rows.append(f"{x},{2 * x + 0.5 + noise}\\n")
open("data.csv", "w").write("x,y\\n" + "".join(rows))
json.dump({"rows": a.rows}, open("metrics.json", "w"))
"""
FIT_CODE = """import argparse, csv, json, statistics
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float)
p.add_argument("--steps", type=int)
a = p.parse_args()
rows = list(csv.DictReader(open("deps/data/data.csv")))
xs, ys = [float(r["x"]) for r in rows], [float(r["y"]) for r in rows]
w = b = 0.0
for _ in range(a.steps):
    res = [w * x + b - y for x, y in zip(xs, ys)]
    w -= a.lr * 2 * statistics.fmean(r * x for r, x in zip(res, xs))
    b -= a.lr * 2 * statistics.fmean(res)
loss = statistics.fmean((w * x + b - y) ** 2 for x, y in zip(xs, ys))
json.dump({"r2": 1 - loss / statistics.pvariance(ys), "lr": a.lr}, open("metrics.json", "w"))
"""
MAIN_LR = 0.1
VARIANTS = (0.03, 0.3, 0.6)
"""The learning rates of the three branches, and of the three fresh runs."""
TASKS = ("data", "fit")
HOLD = {"hold_open": True, "metric": {"name": "r2", "direction": "maximize"}}


def _job(code: str, artifact: str, args: dict[str, float | int]) -> dict[str, object]:
    return {"code": code, "source": code, "filename": "job.py", "args": args,
            "expected_artifacts": [artifact], "resources": {"timeout_s": 60}}


def request(lr: float, *, hold: bool) -> ResearchInput:
    """A run of the two-task plan with learning rate ``lr``, held open for branches or not."""
    plan = Plan.model_validate({"metric": {"name": "r2", "direction": "maximize"}, "decisions": [
        {"task_id": "data", "priority": "HIGH", "action": "simulate the dataset",
         "acceptance_criteria": ["300 rows"],
         "job": _job(DATA_CODE, "data.csv", {"rows": 300, "draws": 18_000, "seed": 15}),
         "checks": [{"metric": "rows", "op": "==", "value": 300}]},
        {"task_id": "fit", "priority": "HIGH", "action": "fit a line by gradient descent",
         "acceptance_criteria": ["r2 reported"], "dependencies": ["data"],
         "job": _job(FIT_CODE, "metrics.json", {"lr": lr, "steps": 25})}]})
    policy = RunPolicy.model_validate({
        "agents": {"enabled": False}, "memory": {"enabled": False},
        "skills": {"enabled": False}, "branching": HOLD if hold else {}})
    return ResearchInput(run_id="", plan_name="bench-branches", plan=plan, policy=policy,
                         plan_sha256=uuid.uuid4().hex * 2)


def branches(names_lrs: list[tuple[str, float]]) -> BranchRequest:
    """A request for branches of ``fit`` from its execute checkpoint, one per learning rate."""
    return BranchRequest(from_task="fit", from_phase="execute", by="bench", branches=[
        BranchSpec(name=name, kind="optimisation", set={"args.lr": lr})
        for name, lr in names_lrs])


@dataclass
class Executions:
    """Sandbox job executions of some task workflows, per task id, and their CPU time."""

    runs: dict[str, int]
    cpu_s: float


async def executions(client: Client, workflow_ids: dict[str, str]) -> Executions:
    """``execute_job`` completions in each workflow (workflow ID -> its task id; a workflow
    that never started, as a reused task's, counts none)."""
    runs = dict.fromkeys(workflow_ids.values(), 0)
    cpu = 0.0
    for workflow_id, task_id in workflow_ids.items():
        try:
            history = await client.get_workflow_handle(workflow_id).fetch_history()
        except RPCError:  # never started: the task was reused, not run
            continue
        scheduled = {e.event_id for e in history.events
                     if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                     and e.activity_task_scheduled_event_attributes.activity_type.name
                     == EXECUTE_JOB.name}
        for event in history.events:
            done = event.activity_task_completed_event_attributes
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED \
                    and done.scheduled_event_id in scheduled:
                (outcome,) = await DATA_CONVERTER.decode(done.result.payloads,
                                                         [EXECUTE_JOB.result])
                runs[task_id] += 1
                cpu += outcome.cpu_s
    return Executions(runs=runs, cpu_s=cpu)


async def until_open(stack: Stack, run_id: str) -> None:
    """Until the run has finished its own tasks and waits for branches."""
    async def is_open() -> bool:
        return (await stack.client.progress(run_id)).phase == "open"
    await wait_for(is_open, timeout=120, what=f"{run_id} to be held open")


async def started(client: Client, workflow_id: str) -> datetime:
    """When ``workflow_id`` started, by the server's clock, once it has."""
    found: list[WorkflowExecutionDescription] = []

    async def exists() -> bool:
        try:
            found.append(await client.get_workflow_handle(workflow_id).describe())
        except RPCError:
            return False
        return True
    await wait_for(exists, timeout=60, what=f"{workflow_id} to start", every=0.02)
    return found[-1].start_time


async def start_latency(stack: Stack) -> dict[str, float]:
    """Median seconds from a one-branch ``start_branches`` call to its answer, to the branch
    workflow's start and to its first task workflow's start, over the three variants."""
    client, steering = stack.client.client, SteeringClient(stack.client)
    run_id = await stack.client.start_run(request(MAIN_LR, hold=True))
    await until_open(stack, run_id)
    answered: list[float] = []
    branch: list[float] = []
    first_task: list[float] = []
    for i, lr in enumerate(VARIANTS):
        name = f"start-{i}"
        asked, clock = datetime.now(UTC), time.perf_counter()
        await steering.start_branches(run_id, branches([(name, lr)]))
        answered.append(time.perf_counter() - clock)
        first = await started(client, branch_task_workflow_id(run_id, name, "fit"))
        first_task.append((first - asked).total_seconds())
        branch.append((await started(client, branch_workflow_id(run_id, name)) - asked)
                      .total_seconds())

        async def ended(name: str = name) -> bool:
            tree = await steering.branches(run_id)
            return all(b.status != "running" for b in tree.branches if b.name == name)
        await wait_for(ended, timeout=120, what=f"branch {name} to end")
    await steering.steer(run_id, SteerRequest(action="close", by="bench"))
    await stack.client.result(run_id)
    return {"answered_ms": statistics.median(answered) * 1000,
            "branch_ms": statistics.median(branch) * 1000,
            "first_task_ms": statistics.median(first_task) * 1000}


async def sweep(stack: Stack) -> tuple[float, Executions, list[str]]:
    """A run of ``MAIN_LR`` held open, three branches of ``fit`` started as it opens, closed:
    wall time, what ran (the main line and every branch) and the branches' statuses."""
    steering = SteeringClient(stack.client)
    names = [(f"lr-{lr}", lr) for lr in VARIANTS]
    clock = time.perf_counter()
    run_id = await stack.client.start_run(request(MAIN_LR, hold=True))
    await until_open(stack, run_id)
    await steering.start_branches(run_id, branches(names))
    await steering.steer(run_id, SteerRequest(action="close", by="bench"))
    await stack.client.result(run_id)
    wall = time.perf_counter() - clock
    tree = await steering.branches(run_id)
    ids = {task_workflow_id(run_id, t): t for t in TASKS}
    ids.update({branch_task_workflow_id(run_id, name, t): t for name, _ in names for t in TASKS})
    ran = await executions(stack.client.client, ids)
    return wall, ran, [f"{b.name} {b.status}" for b in tree.branches]


async def fresh(stack: Stack) -> tuple[float, Executions, list[str]]:
    """The three variants as three fresh runs started together: wall time, what ran."""
    clock = time.perf_counter()
    run_ids = [await stack.client.start_run(request(lr, hold=False)) for lr in VARIANTS]
    results = await asyncio.gather(*(stack.client.result(r) for r in run_ids))
    wall = time.perf_counter() - clock
    ids = {task_workflow_id(r, t): t for r in run_ids for t in TASKS}
    ran = await executions(stack.client.client, ids)
    return wall, ran, [r.status for r in results]


def print_sweep(swept: tuple[float, Executions, list[str]],
                alone: tuple[float, Executions, list[str]]) -> None:
    """The sweep and the fresh runs side by side."""
    (s_wall, s_ran, s_status), (f_wall, f_ran, f_status) = swept, alone
    print(f"   {'':34}{'sweep':>10}{'3 fresh runs':>14}{'ratio':>8}")
    rows = [("wall time (s)", s_wall, f_wall), ("sandbox executions of data", s_ran.runs["data"],
            f_ran.runs["data"]), ("sandbox executions of fit", s_ran.runs["fit"],
            f_ran.runs["fit"]), ("sandbox CPU, all jobs (s)", s_ran.cpu_s, f_ran.cpu_s)]
    for label, a, b in rows:
        print(f"   {label:34}{a:10.2f}{b:14.2f}{a / b:8.2f}" if isinstance(a, float)
              else f"   {label:34}{a:10d}{b:14d}{a / b:8.2f}")
    print(f"   sweep: main line lr {MAIN_LR} + branches {', '.join(s_status)}; "
          f"fresh runs: {', '.join(f_status)}")


async def history_sizes(counts: tuple[int, ...] = (0, 5, 10, 20)) -> None:
    """Print the run's and the largest branch's history at each sweep size."""
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER, ui=False,
        dev_server_extra_args=dev_server_flags())
    try:
        with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
            rows = [await sweeps.sweep(env, f"bench-{uuid.uuid4().hex[:8]}", Path(tmp) / str(n),
                                       n) for n in counts]
    finally:
        await env.shutdown()
    print(f"   {'branches':>8}{'run events':>12}{'run bytes':>12}{'largest event':>15}"
          f"{'largest branch (events, bytes)':>32}")
    for row in rows:
        big = row.largest_branch
        print(f"   {row.branches:>8}{row.run.events:>12}{row.run.bytes:>12}"
              f"{row.run.largest_event:>15}{f'{big.events}, {big.bytes}' if big else '-':>32}")
    first, last = rows[0], rows[-1]
    per = (last.run.bytes - first.run.bytes) / last.branches
    events = (last.run.events - first.run.events) / last.branches
    print(f"   {per:.0f} bytes and {events:.1f} events per branch; at {last.branches} branches "
          f"{last.run.bytes / sweeps.HISTORY_LIMIT_BYTES:.2%} of 50 MB and "
          f"{last.run.events / sweeps.HISTORY_LIMIT_EVENTS:.2%} of 51 200 events; largest "
          f"event {last.run.largest_event / sweeps.PAYLOAD_LIMIT_BYTES:.2%} of 2 MiB; 50 MB "
          f"would hold ~{(sweeps.HISTORY_LIMIT_BYTES - first.run.bytes) / per:.0f} branches")


async def run() -> None:
    """Print every figure: start latency, the sweep against fresh runs, history sizes."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-branches-") as tmp:
        async with started_stack(Path(tmp)) as stack:
            await stack.client.result(await stack.client.start_run(request(MAIN_LR, hold=False)))
            latency = await start_latency(stack)
            print(f"   a. start one branch (median of {len(VARIANTS)}): update answered "
                  f"{latency['answered_ms']:.0f} ms, branch workflow started "
                  f"{latency['branch_ms']:.0f} ms, its first task workflow started "
                  f"{latency['first_task_ms']:.0f} ms after the call")
            print("   b. three-branch sweep of fit (lr) from its execute checkpoint vs the same "
                  "three variants as three fresh runs started together")
            print_sweep(await sweep(stack), await fresh(stack))
    print("   c. history of a sweep of N branches from one checkpoint (dev server, real "
          "workflows, the workflow tests' fake sandbox)")
    await history_sizes()
