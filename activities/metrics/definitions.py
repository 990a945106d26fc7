"""Every metric Assay exports of its own, with its help text: the one place they are defined.

They live in :data:`REGISTRY`, a registry of Assay's own (not prometheus_client's global
one), which each worker's exporter serves beside the Temporal SDK's metrics. Durations are
in seconds and memory in bytes, as Prometheus names them. The model metrics are counted
through the SDK's meter where the gateway makes its calls; :data:`SDK_METRICS` names the
series they appear as on the same endpoint.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from activities.llm.metrics import (
    CACHE_READ_TOKENS,
    CACHE_WRITE_TOKENS,
    CALLS,
    COST_USD,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
)

REGISTRY = CollectorRegistry(auto_describe=True)
"""Assay's metrics, served by every worker (``workers.pools.exporter``)."""

_MINUTE, _HOUR, _DAY = 60.0, 3600.0, 86400.0
PHASE_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, _MINUTE, 5 * _MINUTE,
                   15 * _MINUTE, _HOUR, 4 * _HOUR, _DAY)
"""A phase lasts from milliseconds (intake) to days (a task waiting on a person)."""
GATE_BUCKETS_S = (1.0, 10.0, _MINUTE, 5 * _MINUTE, 15 * _MINUTE, _HOUR, 4 * _HOUR, _DAY,
                  3 * _DAY, 7 * _DAY)
CPU_BUCKETS_S = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, _MINUTE, 5 * _MINUTE,
                 30 * _MINUTE, _HOUR)
MEMORY_BUCKETS_BYTES = tuple(float(2 ** k * 2 ** 20) for k in range(4, 16, 2))
"""16 MiB to 16 GiB, by fours."""

RUNS = Counter(
    "assay_runs", "Runs that ended, by final status (counted once, when the run's report is "
    "written)", ["status"], registry=REGISTRY)
TASKS = Counter(
    "assay_tasks", "Tasks that ended, by final status (counted once, when the task's whole "
    "result is written)", ["status"], registry=REGISTRY)
PHASE_SECONDS = Histogram(
    "assay_task_phase_seconds", "Time a task spent in each phase of its pipeline, from the "
    "phase changes its result records", ["phase"], buckets=PHASE_BUCKETS_S, registry=REGISTRY)
RETRIES = Counter(
    "assay_task_retries", "Retries of finished tasks by subphase: approval (re-reviews), "
    "execution (re-runs), verification (re-checks) and debug (debugger rounds)",
    ["subphase"], registry=REGISTRY)
GATE_WAIT_SECONDS = Histogram(
    "assay_gate_wait_seconds", "Time from a gate opening to its decision, by gate and how it "
    "was settled", ["gate", "decision"], buckets=GATE_BUCKETS_S, registry=REGISTRY)
SANDBOX_JOBS = Counter(
    "assay_sandbox_jobs", "Job attempts the sandbox ran, by classified outcome", ["outcome"],
    registry=REGISTRY)
SANDBOX_SECONDS = Histogram(
    "assay_sandbox_duration_seconds", "Wall-clock time of each job attempt", ["outcome"],
    buckets=CPU_BUCKETS_S, registry=REGISTRY)
SANDBOX_CPU_SECONDS = Histogram(
    "assay_sandbox_cpu_seconds", "CPU time (user + system) of each job attempt's processes",
    ["outcome"], buckets=CPU_BUCKETS_S, registry=REGISTRY)
SANDBOX_PEAK_MEMORY = Histogram(
    "assay_sandbox_peak_memory_bytes", "Peak resident memory of each job attempt",
    ["outcome"], buckets=MEMORY_BUCKETS_BYTES, registry=REGISTRY)
SKILL_RETRIEVALS = Counter(
    "assay_skill_retrievals", "Skill library searches for a goal or a jobless task, by "
    "whether any skill was found (hit) or not (miss)", ["result"], registry=REGISTRY)
SKILL_USES = Counter(
    "assay_skill_uses", "Finished tasks that ran a skill's job (the checker's uses)",
    registry=REGISTRY)
SKILL_SUCCESSES = Counter(
    "assay_skill_successes", "Skill uses whose task completed", registry=REGISTRY)
MEMORY_LOOKUPS = Counter(
    "assay_memory_lookups", "Memory lookups: consult (advice per task at intake) and recall "
    "(notes for the planner)", ["lookup"], registry=REGISTRY)
MEMORY_MISSES = Counter(
    "assay_memory_misses", "Memory lookups that found nothing to give (no rule, template or "
    "note)", ["lookup"], registry=REGISTRY)

SDK_METRICS: dict[str, str] = {
    CALLS: "counter", INPUT_TOKENS: "counter", OUTPUT_TOKENS: "counter",
    CACHE_READ_TOKENS: "counter", CACHE_WRITE_TOKENS: "counter", COST_USD: "histogram",
}
"""Model metrics the gateway counts through the SDK's meter (``activities.llm.metrics``),
labelled ``role``, ``model`` and ``source``, by name and kind; the SDK exports its counters
without a ``_total`` suffix."""


def series_names() -> set[str]:
    """Every series name the worker endpoint carries for Assay: the registry's and the SDK's.

    A counter ``assay_runs`` is the series ``assay_runs_total``; a histogram ``h`` is
    ``h_bucket``, ``h_sum`` and ``h_count``.
    """
    names: set[str] = set()
    for family in REGISTRY.collect():
        names.update(sample.name for sample in family.samples)
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names.update(f"{family.name}{s}" for s in ("_bucket", "_sum", "_count"))
    for name, kind in SDK_METRICS.items():
        names.update({name} if kind == "counter"
                     else {f"{name}{s}" for s in ("_bucket", "_sum", "_count")})
    return names
