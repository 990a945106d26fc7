"""``make bench``: every benchmark, each printed beside its baseline from the same run.

1. a one-task Assay run through the whole executive pipeline vs a bare one-activity workflow
   and vs the floor, a bare workflow with the run's dispatch shape (``floor.py``), on the same
   dev server (latency and throughput), the same run without learning (memory and skills
   off), Assay against the floor with learning's dispatches (a signal to a library workflow
   and its dispatch to the reflection pool) and against that floor keeping its phase, status
   and attempts in search attributes as the design asks (eight upserts), these five measured
   in turns (``measuring.py``), the CPU each process spends per run of the bursts
   (``cpu.py``: workers, Temporal's server, PostgreSQL, jobs), where its time goes (from its
   histories, local activities as their workers timed them; its history bytes against the
   floor's),
   what 100 concurrent runs kept, the overhead on a 60-second job, and the CLI's start; then
   the same with no process for the job, Assay's orchestration on the in-process sandbox vs
   the floor without its ``python`` (``bench_orchestration.py``: with the pools' workflow
   runner, the SDK's sandbox and no sandbox);
2. sandbox start overhead vs a bare ``python -c pass``; job throughput: N real jobs through
   the sandbox and verification vs the same jobs as bare ``bwrap … python`` at the same
   concurrency (jobs/s, time to the first job, where a job's time goes, the worker's CPU per
   job); a tick's look-up of a job's processes vs ``psutil``'s scan of the machine;
3. event ingestion through the store vs raw asyncpg inserts;
4. start-up of the embedded services.
5. memory's task-type look-ups in the in-process shard vs qdrant-client's local mode (median,
   opening, carrying over, same answers); a recurring out-of-memory task with reflection
   memory on vs off (attempts, wall time);
6. skill retrieval at 1 000 and 10 000 skills vs a dense-only search (latency, recall@5, MRR);
   ``assay skills search`` and ``assay memory rules`` from a fresh process at 1 000 skills
   (time to first result) vs a fresh ``python -c pass`` and ``assay --help``, and
   recall@5 and MRR on the labelled collection: before, BM25 alone, dense alone, shipped.
7. a run's result and history with 4 tasks of 999 artifacts, with 100, 500, 1 000, 5 000 and
   10 000 independent tasks and a chain of 200 (sizes against Temporal's limits, report files,
   wall time per task, worker memory, and the per-task ratio of 1 000, 5 000 and 10 000 to
   100), with the scale table: each workflow's history (run, largest batch, a task).
8. provisioning a job environment from a wheelhouse: the first time vs a cache hit.
9. branches: time to start one; a three-branch sweep from a checkpoint vs three fresh runs
   (wall time, sandbox executions, CPU); the run's history with 0 to 20 branches.
10. studies: a 50-cycle study's longest history and time per cycle (first ten vs last ten), and
    the planner's study context for two 20-task cycles against its byte budget.
11. parts: the artifact store (local and S3 on moto's server) vs a bare file copy, the
    timeline figure vs a blank PNG of its size, documentation lookups vs ``inspect.getsource``,
    a workflow's sandbox start without and with the workers' code cache vs the floor's, a
    signal to a running workflow vs a signal-with-start of it (``bench_signals.py``).
12. guards: a 2 MB job source refused by the review vs parsing it, a 1.4 MB skill query vs a
    one-line one, 154 skill folders read vs their bytes, hostile plan files refused by the CLI
    vs an empty plan (the timings the functional tests leave to this suite).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import (
    bench_branches,
    bench_environments,
    bench_events,
    bench_guards,
    bench_jobs,
    bench_lookups,
    bench_memory,
    bench_orchestration,
    bench_parts,
    bench_results,
    bench_signals,
    bench_skill_search,
    bench_skills,
    bench_stack,
    bench_studies,
)
from benchmarks.bench_runs import ROUNDS, bench
from benchmarks.bench_sandbox import measure_start_overhead
from benchmarks.cpu import KINDS
from benchmarks.floor import LOCAL_CALLS, UPSERTS


def print_runs() -> None:
    """Latency and throughput, Assay against the bare workflow."""
    figures = asyncio.run(bench())
    bare, floor, assay = figures["bare"], figures["floor"], figures["assay"]
    print("1. one-task run (review, sandbox, verify, events, report) vs bare one-activity "
          "workflow, and vs the floor (a bare workflow with the run's dispatch shape: child "
          "workflow, 6 activities on 3 queues, a `python -c pass` job, "
          f"{LOCAL_CALLS} local activities; "
          "benchmarks/floor.py), same dev server (SQLite WAL, queue reads tuned as `assay up` runs "
          "it: workers/stack/temporal.py); the floors and Assay's two runs measured in turns, "
          f"one sequential run of each at a time, then {ROUNDS} bursts of each, round by round "
          "(benchmarks/measuring.py)")
    print(f"   {'':24}{'bare':>10}{'floor':>10}{'assay':>10}{'/bare':>8}{'/floor':>8}")
    for key, label in (("median_ms", "latency median (ms)"), ("p95_ms", "latency p95 (ms)"),
                       ("throughput_per_s", "throughput (runs/s)")):
        print(f"   {label:24}{bare[key]:10.1f}{floor[key]:10.1f}{assay[key]:10.1f}"
              f"{assay[key] / bare[key]:8.2f}{assay[key] / floor[key]:8.2f}")
    quiet, learning = figures["unlearning"], figures["floor_learning"]
    print_pair("assay without learning", floor, quiet,
               "memory and skills off: no look-up, no hand-off, no library work")
    print_pair("the floor with learning", learning, assay,
               "its hand-off signals a library workflow, which makes one dispatch a batch")
    marked = figures["floor_marked"]
    print_pair("the floor with learning and search attributes", marked, assay,
               f"and its run and task keep their phase, status and attempts in search "
               f"attributes, as the design asks: {UPSERTS} upserts, as a one-task run sends")
    print_cpu(floor, assay, quiet, learning, marked)
    untuned = figures["bare_untuned"]
    print(f"   the bare workflow on a dev server with Temporal's default queue reads (20 a "
          f"second): latency median {untuned['median_ms']:.1f} ms, throughput "
          f"{untuned['throughput_per_s']:.1f} runs/s")
    print(f"   job run time inside the sandbox (median): {assay['job_ms']:.1f} ms; "
          f"bar: latency <= 3 x bare + job = {3 * bare['median_ms'] + assay['job_ms']:.0f} ms")
    print("   where a one-task run's time goes (its workflows' histories, mean of the latency "
          "runs; a local activity's run is the time its worker timed it, and is inside its "
          "workflow task's):")
    print("\n".join(figures["breakdown"].lines()))
    held = figures["floor_breakdown"]
    print(f"   the floor's, the same way: {held.events / max(held.runs, 1):.0f} history events, "
          f"{held.history_bytes / max(held.runs, 1):.0f} bytes a run")
    burst = figures["burst"]
    print(f"   the {burst['started']} concurrent runs: {burst['completed']} completed, "
          f"{burst['with_events']} with events ({burst['events_min']}-{burst['events_max']} "
          "events each)")
    if "long" in figures:
        long = figures["long"]
        print(f"   a {long['job_s']:.1f} s job: run {long['wall_s']:.2f} s, orchestration "
              f"{long['overhead_s']:.2f} s = {100 * long['overhead_s'] / long['job_s']:.1f} % "
              "of the job (bar <= 5 %)")
    print("   the CLI, a fresh process each (median of 5): " + ", ".join(
        f"{k} {v:.0f} ms" for k, v in figures["cli"].items()) + " (bar < 500 ms)")
    print_orchestration()


def print_pair(title: str, floor: dict[str, Any], assay: dict[str, Any], note: str) -> None:
    """Two more lines of section 1's table: a floor's and an Assay run's, and their ratio."""
    print(f"   {title:24}{'':10}{'':10}{'':10}{'':8}{'':8}  ({note})")
    for key, label in (("median_ms", "  latency median (ms)"),
                       ("throughput_per_s", "  throughput (runs/s)")):
        print(f"   {label:24}{'':10}{floor[key]:10.1f}{assay[key]:10.1f}{'':8}"
              f"{assay[key] / floor[key]:8.2f}")


def print_cpu(floor: dict[str, Any], assay: dict[str, Any], quiet: dict[str, Any],
              learning: dict[str, Any], marked: dict[str, Any]) -> None:
    """CPU milliseconds per run of the throughput burst, by process (benchmarks/cpu.py)."""
    print("   CPU per run of the bursts (ms; 2 cores bound throughput): the workers' process, "
          "Temporal's server, PostgreSQL, the jobs (a sandboxed job by its cgroup), their "
          "total; and of the workers' share, its garbage collections (workers/pools/collector.py)")
    print(f"   {'':24}{'workers':>10}{'temporal':>10}{'postgres':>10}{'jobs':>8}{'total':>8}"
          f"{'collecting':>12}")
    for label, cpu in (("floor", floor["cpu"]), ("the floor with learning", learning["cpu"]),
                       ("  and search attributes", marked["cpu"]),
                       ("assay", assay["cpu"]), ("assay without learning", quiet["cpu"])):
        total = sum(cpu[kind] for kind in KINDS)
        print(f"   {label:24}{cpu['workers']:10.1f}{cpu['temporal']:10.1f}"
              f"{cpu['postgres']:10.1f}{cpu['jobs']:8.1f}{total:8.1f}{cpu['collecting']:12.1f}")


def print_orchestration() -> None:
    """The same one-task run with no process for the job, against the floor without one."""
    figures = asyncio.run(bench_orchestration.run())
    floor, assay, sdk = figures["floor"], figures["assay"], figures["assay_sdk_runner"]
    bare = figures["assay_unsandboxed"]
    print("   with no process for the job (benchmarks/bench_orchestration.py): Assay's "
          "workflows, reviewers, verifier and report writer on the in-process sandbox, events "
          "and hand-offs in memory, against the floor without its `python` (a new dev server); "
          "Assay with its pools' workflow runner (workers/pools/runner.py), with the SDK's "
          "own sandbox, and with no workflow sandbox (what the sandbox costs; Assay keeps it); "
          "the four measured in turns, as above")
    print(f"   {'':30}{'floor':>10}{'assay':>10}{'/floor':>8}{'SDK runner':>12}{'/floor':>8}"
          f"{'unsandboxed':>13}{'/floor':>8}")
    for key, label in (("median_ms", "latency median (ms)"), ("p95_ms", "latency p95 (ms)"),
                       ("throughput_per_s", "throughput (runs/s)")):
        print(f"   {label:30}{floor[key]:10.1f}{assay[key]:10.1f}{assay[key] / floor[key]:8.2f}"
              f"{sdk[key]:12.1f}{sdk[key] / floor[key]:8.2f}"
              f"{bare[key]:13.1f}{bare[key] / floor[key]:8.2f}")
    for kind in ("workers", "temporal"):
        label = f"CPU per run, {kind} (ms)"
        print(f"   {label:30}{floor['cpu'][kind]:10.1f}{assay['cpu'][kind]:10.1f}"
              f"{assay['cpu'][kind] / floor['cpu'][kind]:8.2f}{sdk['cpu'][kind]:12.1f}"
              f"{sdk['cpu'][kind] / floor['cpu'][kind]:8.2f}{bare['cpu'][kind]:13.1f}"
              f"{bare['cpu'][kind] / floor['cpu'][kind]:8.2f}")


def print_sandbox() -> None:
    """Sandbox start overhead."""
    figures = asyncio.run(measure_start_overhead(20))
    print("2. sandbox start: `pass` through the sandbox vs bare `python -c pass` (median of 20)")
    print(f"   bare {figures['bare_ms']:.1f} ms, sandboxed {figures['sandbox_ms']:.1f} ms, "
          f"overhead {figures['overhead_ms']:.1f} ms (target <= 50 ms)")
    print("   job throughput: 40 real jobs through the sandbox and verification vs the same jobs "
          "as bare `bwrap ... python`, as many at a time as there are cores (the limit)")
    bench_jobs.run(40)


def print_events() -> None:
    """Event ingestion."""
    print("3. event ingestion")
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        asyncio.run(bench_events.run(20_000, 3, Path(tmp) / "pg"))


def print_stack() -> None:
    """Embedded service start-up."""
    figures = asyncio.run(bench_stack.measure())
    print("4. embedded services to healthy (ms): "
          + ", ".join(f"{k.removesuffix('_ms')} {v:.0f}" for k, v in figures.items()))


def print_memory() -> None:
    """Reflection memory on a recurring out-of-memory task, against memory off."""
    print("5. memory's task-type look-ups: the in-process shard vs qdrant-client's local mode "
          "(before), same 1 000 types")
    bench_lookups.run()
    print("   the same out-of-memory task run 4 times with memory off (baseline), then 4 times "
          "with memory on, same stack")
    asyncio.run(bench_memory.run(4))


def print_skills() -> None:
    """Skill retrieval at 1 000 and 10 000 skills, against a dense-only search."""
    print("6. skill retrieval: 4 reformulations, dense + field-weighted BM25 fused by weighted "
          "RRF, theta, MMR, top 20 vs a dense-only single-query search on the same shard")
    bench_skills.run()
    print("   assay skills search from a fresh process, and recall@5 / MRR on the labelled "
          "collection (benchmarks/retrieval.py)")
    bench_skill_search.run()


def print_results() -> None:
    """A run's result and history at scale."""
    print("7. a run's result and history: 4 tasks of 999 artifacts, then 100, 500, 1 000, "
          "5 000 and 10 000 trivial tasks and a chain of 200 (real workflows and report "
          "writer, in-process sandbox, dev server)")
    rows = {r["case"]: r for r in asyncio.run(bench_results.run(list(bench_results.CASES)))}
    print_scale(rows)
    for big in ("1000", "5000", "10000"):
        if "100" in rows and big in rows:
            print(f"   per-task time, {int(big):,} tasks against 100: "
                  f"{rows[big]['per_task_ms'] / rows['100']['per_task_ms']:.2f}x (flat: ~1"
                  + ("; bar <= 1.3" if big == "10000" else "") + ")")


def print_scale(rows: dict[str, dict[str, Any]]) -> None:
    """The scale table: per-task time, each workflow's history, RSS, ``assay status``."""
    print("   | tasks | per task | run events | run MB | batches | batch events | batch MB "
          "| batch hand-back | task events | task kB | largest event | RSS | assay status |")
    print("   |" + " ---: |" * 13)
    for case in ("100", "500", "1000", "5000", "10000"):
        if case not in rows:
            continue
        r = rows[case]
        batch = (f"{r['batches']} | {r['batch_events']} | {r['batch_bytes'] / 1e6:.2f} "
                 f"| {r['batch_hand_back_s']:.2f} s" if r["batches"] else "— | — | — | —")
        largest = max(r["largest_event"], r["batch_largest_event"])
        print(f"   | {int(case):,} | {r['per_task_ms']:.1f} ms | {r['events']} "
              f"| {r['history_bytes'] / 1e6:.2f} | {batch} | {r['task_events']} "
              f"| {r['task_bytes'] / 1e3:.1f} | {largest / 1e3:.0f} kB | {r['rss_mb']:.0f} MB "
              f"| {r['status_ms']:.0f} ms |")


def print_environments() -> None:
    """Provisioning a job environment, first time vs cache hit."""
    figures = asyncio.run(bench_environments.run())
    print(f"8. job environment of {figures['packages']:.0f} wheels from a local wheelhouse "
          "(uv resolve + install, median of 3, fresh download cache each time)")
    print(f"   {'first provisioning':24}{'second (cache hit)':>20}{'ratio':>10}")
    print(f"   {figures['first_ms']:20.1f} ms{figures['again_ms']:17.2f} ms"
          f"{figures['first_ms'] / max(figures['again_ms'], 1e-3):10.0f}x"
          f"   (installs: {figures['installs']:.0f} for 3 first + 3 second provisionings)")


def print_branches() -> None:
    """Branches: start latency, a sweep against fresh runs, history sizes."""
    print("9. branches (dev server, every pool, the real sandbox; data task ~1.5 s of CPU)")
    asyncio.run(bench_branches.run())


def print_studies() -> None:
    """Studies: a 50-cycle study's histories and time per cycle, the planner's context."""
    print("10. studies (time-skipping server, real workflows, the fake sandbox)")
    asyncio.run(bench_studies.run())


def print_parts() -> None:
    """The artifact store, the timeline figure and documentation lookups, each beside a bare
    baseline."""
    print("11. parts: the artifact store (local, S3 on moto), the timeline figure, lookups, "
          "a workflow's sandbox start, a signal against a signal-with-start")
    bench_parts.run()
    bench_signals.run()


def print_guards() -> None:
    """Guards against huge or hostile input, each beside the work it spares."""
    print("12. guards: huge or hostile input refused or bounded (median of 5, of 3 for folders)")
    bench_guards.run()


def main() -> None:
    """Run every benchmark, or those named (runs, sandbox, events, stack, memory, skills,
    results, environments, branches, studies, parts, guards)."""
    chosen = set(sys.argv[1:]) or {"runs", "sandbox", "events", "stack", "memory", "skills",
                                   "results", "environments", "branches", "studies", "parts",
                                   "guards"}
    for name, fn in (("runs", print_runs), ("sandbox", print_sandbox),
                     ("events", print_events), ("stack", print_stack),
                     ("memory", print_memory), ("skills", print_skills),
                     ("results", print_results), ("environments", print_environments),
                     ("branches", print_branches), ("studies", print_studies),
                     ("parts", print_parts), ("guards", print_guards)):
        if name in chosen:
            fn()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
