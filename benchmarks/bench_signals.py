"""A signal to a running workflow against a signal-with-start of it, as the hand-off sends them.

The hand-off to the learner (``activities/learning/handoff.py``) signals the running skill
library and starts it with the signal only when none runs. This measures why: the same outcome
sent to one running workflow as a plain signal and as a signal-with-start (``USE_EXISTING``),
each answered by a workflow task of its own (a pause between two), on a dev server of its own
with a SQLite file as ``assay up`` runs it; the rounds alternate. Printed: Temporal's CPU and
this process's (client and worker) per signal, and the wall time, beside the pauses alone.

Run: ``python -m benchmarks.bench_signals`` (section 11 of ``make bench`` prints it).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from benchmarks.cpu import cpu_seconds
from workers.stack.temporal import dev_server_flags

QUEUE = "bench-signals"
SINK_ID = "bench-signal-sink"
OUTCOME = "x" * 4500
"""A payload the size of a one-task run's outcome."""
PAUSE_S = 0.01
"""Between two signals, so each wakes the workflow on its own, as one run's outcome does."""


@workflow.defn(name="BenchSignalSink")
class SignalSink:
    """Takes signals for ever, as the library does."""

    def __init__(self) -> None:
        self.taken = 0

    @workflow.signal(name="finished")
    def finished(self, outcome: str) -> None:
        """One outcome."""
        self.taken += 1

    @workflow.run
    async def run(self) -> None:
        """Wait (the benchmark's server goes with it)."""
        await workflow.wait_condition(lambda: False)


async def per_signal(send: Callable[[], Awaitable[object]], n: int) -> tuple[float, float, float]:
    """Milliseconds per signal: Temporal's CPU, this process's CPU, wall time."""
    before, start = cpu_seconds(None), time.perf_counter()
    for _ in range(n):
        await send()
        await asyncio.sleep(PAUSE_S)
    wall, after = time.perf_counter() - start, cpu_seconds(None)
    return (1000 * (after["temporal"] - before["temporal"]) / n,
            1000 * (after["workers"] - before["workers"]) / n, 1000 * wall / n)


async def measure(n: int = 200, rounds: int = 3) -> dict[str, list[tuple[float, float, float]]]:
    """``rounds`` alternating rounds of ``n`` signals each way."""
    with tempfile.TemporaryDirectory(prefix="assay-bench-signals-") as tmp:
        return await _measure_on(Path(tmp) / "temporal.db", n, rounds)


async def _measure_on(db_file: Path, n: int,
                      rounds: int) -> dict[str, list[tuple[float, float, float]]]:
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"), ui=False,
        dev_server_extra_args=dev_server_flags(db_file))
    client: Client = env.client
    try:
        async with Worker(client, task_queue=QUEUE, workflows=[SignalSink],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            await client.start_workflow(SignalSink.run, id=SINK_ID, task_queue=QUEUE)
            handle = client.get_workflow_handle(SINK_ID)

            async def signal() -> None:
                await handle.signal("finished", OUTCOME)

            async def signal_with_start() -> None:
                await client.start_workflow(
                    SignalSink.run, id=SINK_ID, task_queue=QUEUE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    start_signal="finished", start_signal_args=[OUTCOME])

            async def pause() -> None:
                pass

            figures: dict[str, list[tuple[float, float, float]]] = {
                "signal": [], "signal-with-start": [], "the pauses alone": []}
            await per_signal(signal, 20)  # warm-up
            for _ in range(rounds):
                for name, send in (("signal", signal), ("signal-with-start", signal_with_start),
                                   ("the pauses alone", pause)):
                    figures[name].append(await per_signal(send, n))
            await handle.terminate()
            return figures
    finally:
        await env.shutdown()


def run() -> None:
    """Measure and print."""
    figures = asyncio.run(measure())
    print(f"   {'signal to a running workflow':34}{'Temporal CPU':>14}{'client CPU':>12}"
          f"{'wall':>10}  (per signal, 200 a round, rounds alternated)")
    for name, rounds in figures.items():
        for server, client, wall in rounds:
            print(f"   {name:34}{server:11.2f} ms{client:9.2f} ms{wall:7.2f} ms")


if __name__ == "__main__":
    run()
