"""Variants measured together: sequential runs one of each in turn, bursts round by round."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from benchmarks.measuring import measure, measure_rounds


class Recorder:
    """Calls that note, in order, which variant ran and how many of it were running."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []
        self.running: dict[str, int] = {}

    def call(self, name: str, seconds: float = 0.0) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            self.running[name] = self.running.get(name, 0) + 1
            self.log.append((name, self.running[name]))
            await asyncio.sleep(seconds)
            self.running[name] -= 1
        return one


async def test_runs_take_turns_and_bursts_alternate_round_by_round() -> None:
    seen = Recorder()
    settled: list[str] = []

    async def settle(name: str) -> None:
        settled.append(name)

    found = await measure_rounds({"a": seen.call("a"), "b": seen.call("b")}, latency_n=3,
                                 concurrent_n=4, rounds=2, settle=settle)
    names = [name for name, _ in seen.log]
    # a warm-up of each, three sequential runs of each in turn, then bursts a, b, a, b
    assert names == ["a", "b"] + ["a", "b"] * 3 + ["a"] * 4 + ["b"] * 4 + ["a"] * 4 + ["b"] * 4
    assert [n for _, n in seen.log[:8]] == [1] * 8  # the sequential runs run alone
    assert max(n for _, n in seen.log[8:12]) == 4  # a burst runs all of its runs at once
    assert settled == ["a", "b"] * (1 + 3 + 2)  # after every run and burst
    assert set(found) == {"a", "b"}
    assert set(found["a"]["cpu"]) >= {"workers", "temporal", "postgres", "jobs", "collecting"}


async def test_a_variants_figures_are_its_own() -> None:
    seen = Recorder()
    found = await measure_rounds({"fast": seen.call("fast"), "slow": seen.call("slow", 0.05)},
                                 latency_n=3, concurrent_n=5, rounds=2)
    assert found["slow"]["median_ms"] >= 50 > found["fast"]["median_ms"]
    # each slow burst takes at least 50 ms for its five runs: at most 100 runs a second
    assert found["slow"]["throughput_per_s"] <= 100 < found["fast"]["throughput_per_s"]


async def test_measure_is_one_variant_in_one_round() -> None:
    seen = Recorder()
    found = await measure("only", seen.call("only", 0.01), latency_n=2, concurrent_n=3)
    assert [name for name, _ in seen.log] == ["only"] * (1 + 2 + 3)
    assert found["median_ms"] >= 10
    for counts in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):  # nothing to measure: refused, naming it
        latency_n, concurrent_n, rounds = counts
        with pytest.raises(ValueError, match=f"latency_n={latency_n}"):
            await measure_rounds({"x": seen.call("x")}, latency_n=latency_n,
                                 concurrent_n=concurrent_n, rounds=rounds)
    with pytest.raises(ValueError, match="0 calls"):
        await measure_rounds({}, latency_n=1, concurrent_n=1, rounds=1)
