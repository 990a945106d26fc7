"""Latency, throughput and CPU per run of a workflow call, alone or beside others in rounds.

:func:`measure` takes one call: its median latency over sequential calls, then the throughput
of a burst of concurrent calls and the CPU each process spent per run of it
(:mod:`benchmarks.cpu`). :func:`measure_rounds` measures several calls the same way, with
their runs interleaved: the i-th sequential run of each call follows the i-th of the one
before, and the bursts take turns, round after round. Measured one after another, each
variant met the machine in a different minute: in four runs of ``make bench`` section 1, the
same floor with learning took 187 to 254 ms, more than the differences between the variants.
Interleaved, the drift reaches every variant alike.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from benchmarks.cpu import per_run

Call = Callable[[], Awaitable[object]]
Settle = Callable[[str], Awaitable[None]]
"""What to wait for after a variant's run or burst before the next one starts (its name)."""


async def timed(fn: Call) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def measure(name: str, one: Call, *, latency_n: int, concurrent_n: int,
                  pg_pid: int | None = None) -> dict[str, Any]:
    """Median latency over sequential calls, then throughput of concurrent calls, and the CPU
    each process spent per run of that burst (``cpu``: :mod:`benchmarks.cpu`)."""
    found = await measure_rounds({name: one}, latency_n=latency_n, concurrent_n=concurrent_n,
                                 rounds=1, pg_pid=pg_pid)
    return found[name]


async def measure_rounds(calls: Mapping[str, Call], *, latency_n: int, concurrent_n: int,
                         rounds: int, pg_pid: int | None = None,
                         settle: Settle | None = None) -> dict[str, dict[str, Any]]:
    """Each call's figures as :func:`measure` gives them, its runs interleaved with the others'.

    Each call is warmed up once; then ``latency_n`` times, one sequential run of each in
    turn; then ``rounds`` times, a burst of ``concurrent_n`` runs of each in turn. A call's
    throughput is all its bursts' runs over their summed time, its CPU per run the mean of its
    bursts'. ``settle`` is awaited after every run and burst, outside the times measured.

    Raises:
        ValueError: a count below one: there would be no figure to give.
    """
    if min(latency_n, concurrent_n, rounds) < 1 or not calls:
        raise ValueError(f"measure_rounds needs a call and counts of at least 1, got "
                         f"{len(calls)} calls, latency_n={latency_n}, "
                         f"concurrent_n={concurrent_n}, rounds={rounds}")

    async def settled(name: str) -> None:
        if settle is not None:
            await settle(name)

    for name, one in calls.items():
        await one()  # warm-up
        await settled(name)
    latencies: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(latency_n):
        for name, one in calls.items():
            latencies[name].append(await timed(one))
            await settled(name)
    elapsed: dict[str, float] = dict.fromkeys(calls, 0.0)
    cpus: dict[str, list[dict[str, float]]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, one in calls.items():
            start = time.perf_counter()
            cpus[name].append(await per_run(
                lambda one=one: asyncio.gather(*(one() for _ in range(concurrent_n))),
                concurrent_n, pg_pid))
            elapsed[name] += time.perf_counter() - start
            await settled(name)
    return {name: {"median_ms": statistics.median(latencies[name]) * 1000,
                   "p95_ms": sorted(latencies[name])[int(0.95 * (latency_n - 1))] * 1000,
                   "throughput_per_s": rounds * concurrent_n / elapsed[name],
                   "cpu": {kind: statistics.fmean(c[kind] for c in cpus[name])
                           for kind in cpus[name][0]}}
            for name in calls}
