"""``make bench``: every benchmark, each printed beside its baseline from the same run."""

from __future__ import annotations

import asyncio

from benchmarks.bench_runs import bench


def main() -> None:
    """Run the benchmarks and print a table."""
    figures = asyncio.run(bench())
    bare, assay = figures["bare"], figures["assay"]
    print("one-task run vs bare one-activity workflow (same dev server, WAL)")
    print(f"{'':24}{'bare':>12}{'assay':>12}{'ratio':>10}")
    for key, label in (("median_ms", "latency median (ms)"), ("p95_ms", "latency p95 (ms)"),
                       ("throughput_per_s", "throughput (runs/s)")):
        print(f"{label:24}{bare[key]:12.1f}{assay[key]:12.1f}{assay[key] / bare[key]:10.2f}")


if __name__ == "__main__":
    main()
