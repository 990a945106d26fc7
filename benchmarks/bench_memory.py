"""What reflection memory saves on a task type that keeps running out of memory.

The plan ``tests/data/memory/train.json`` asks for a batch size too large for its memory limit.
Without memory every run relearns the fix by halving the batch twice (three attempts); with
memory a later run takes the proven fix at once, and once the root cause has been seen three
times a semantic rule plans the smaller batch at intake, so the job succeeds first time.

Both series run on one stack (temporal dev server, embedded PostgreSQL, every served pool in
this process), memory off first so that nothing learned by the memory-on series can reach
the baseline, after one uncounted memory-off warm-up run.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TypedDict

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.learning.settle import wait_learned
from client.assay import DATA_CONVERTER, AssayClient
from workers.cli.show import load_report
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres
from workers.stack.temporal import dev_server_flags
from workflows.contracts.pools import Pool
from workflows.contracts.results import RunReport

PLAN = Path(__file__).resolve().parent.parent / "tests" / "data" / "memory" / "train.json"
RUN_TIMEOUT_S = 120.0
POOLS_STOP_TIMEOUT_S = 60.0


class RunFigures(TypedDict):
    """One run of the plan: how many attempts it took and how long, and what memory did."""

    run: int
    status: str
    attempts: int
    wall_ms: float
    sources: list[str]
    rule_applied: bool


class MemoryFigures(TypedDict):
    """Both series, run by run, and the time the whole benchmark took."""

    off: list[RunFigures]
    on: list[RunFigures]
    total_ms: float


class Stack:
    """A running stack and a way to run the plan on it with memory on or off."""

    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = AssayClient(client, task_queue=settings.queue_orchestration)
        self.settings = settings

    async def run(self, number: int, *, memory: bool) -> RunFigures:
        """Run the plan once and measure it; fail if it takes over ``RUN_TIMEOUT_S``."""
        policy = build_policy(self.settings, agents=AgentFlags(enabled=False), memory=memory)
        req = load_plan(PLAN, max_bytes=self.settings.max_plan_bytes, policy=policy,
                        queues=queues_from(self.settings))
        start = time.perf_counter()
        run_id = await self.client.start_run(req, again=True)
        try:
            result = await asyncio.wait_for(self.client.result(run_id), RUN_TIMEOUT_S)
        except TimeoutError as err:
            raise TimeoutError(f"memory-{'on' if memory else 'off'} run {number} ({run_id}) "
                               f"did not finish within {RUN_TIMEOUT_S:.0f} s") from err
        wall_ms = (time.perf_counter() - start) * 1000
        report = load_report(result)
        assert report is not None, f"the results JSON of {run_id} cannot be read"
        # learning follows the task: the next run starts once memory has learned from this one
        keys = [f"{run_id}/{t.task_id}" for t in report.tasks]
        assert await wait_learned(self.client.client, self.settings.queue(Pool.SKILLS),
                                  keys) == [], f"the learner did not learn from {run_id}"
        return figures_of(number, report, wall_ms)


def figures_of(number: int, result: RunReport, wall_ms: float) -> RunFigures:
    """The figures of one finished run of the one-task plan."""
    (task,) = result.tasks
    return RunFigures(run=number, status=task.status,
                      attempts=task.provenance.execution.attempts, wall_ms=wall_ms,
                      sources=[note.source for note in task.reflections],
                      rule_applied=bool(result.reflection.rules_applied))


@asynccontextmanager
async def started_stack(root: Path) -> AsyncGenerator[Stack]:
    """Dev server, embedded PostgreSQL and every served pool; all torn down on the way out."""
    async with AsyncExitStack() as exits:
        env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
            dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
            data_converter=DATA_CONVERTER, ui=False,
            dev_server_extra_args=dev_server_flags(root / "temporal.db"))
        exits.push_async_callback(env.shutdown)
        pg = EmbeddedPostgres(root / "pg")
        exits.callback(pg.stop)  # also stops a server that started but failed its checks
        pg.start()
        pg.ensure_database("assay")
        settings = Settings(data_dir=root / "assay")
        stop = asyncio.Event()
        pools = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                              database_url=pg.url("assay"), stop=stop,
                                              client=env.client))

        async def stop_pools() -> None:
            stop.set()
            await asyncio.wait_for(pools, POOLS_STOP_TIMEOUT_S)

        exits.push_async_callback(stop_pools)
        yield Stack(env.client, settings)


async def measure(runs: int) -> tuple[list[RunFigures], list[RunFigures]]:
    """Both series on one fresh stack: memory off first, then memory on.

    An uncounted memory-off run goes first, so that the first counted run does not carry the
    stack's cold start (workers' first polls, first sandbox) into the baseline.
    """
    with tempfile.TemporaryDirectory(prefix="assay-bench-memory-") as tmp:
        async with started_stack(Path(tmp)) as stack:
            await stack.run(0, memory=False)
            off = [await stack.run(n, memory=False) for n in range(1, runs + 1)]
            on = [await stack.run(n, memory=True) for n in range(1, runs + 1)]
    return off, on


async def run(runs: int = 4) -> MemoryFigures:
    """Run the plan ``runs`` times with memory off, then ``runs`` times with it on; print both.

    Args:
        runs: runs in each series; four show every stage (learn, recall twice, rule at intake).

    Returns:
        The figures of every run of both series, and the benchmark's total time in ms.
    """
    start = time.perf_counter()
    off, on = await measure(runs)
    figures = MemoryFigures(off=off, on=on, total_ms=(time.perf_counter() - start) * 1000)
    print_table(figures)
    return figures


def print_table(figures: MemoryFigures) -> None:
    """The two series side by side, run by run, with totals."""
    print(f"   {'run':>3}  {'off attempts':>12}{'off ms':>9}  {'on attempts':>11}{'on ms':>9}"
          "  on: notes; rule at intake")
    for off, on in zip(figures["off"], figures["on"], strict=True):
        notes = ", ".join(on["sources"]) or "none"
        rule = "rule applied" if on["rule_applied"] else "no rule"
        failed = "".join(f" [{side} {f['status']}]" for side, f in (("off", off), ("on", on))
                         if f["status"] != "completed")
        print(f"   {off['run']:>3}  {off['attempts']:>12}{off['wall_ms']:>9.0f}  "
              f"{on['attempts']:>11}{on['wall_ms']:>9.0f}  {notes}; {rule}{failed}")
    print(f"   {'all':>3}  {sum(f['attempts'] for f in figures['off']):>12}"
          f"{sum(f['wall_ms'] for f in figures['off']):>9.0f}  "
          f"{sum(f['attempts'] for f in figures['on']):>11}"
          f"{sum(f['wall_ms'] for f in figures['on']):>9.0f}")
    print(f"   total job time (stack start, both series, teardown): "
          f"{figures['total_ms'] / 1000:.1f} s")


if __name__ == "__main__":
    asyncio.run(run())
