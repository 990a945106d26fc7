"""What activities see, turned into Assay's metrics (``definitions``).

Each function takes what its activity already holds (a task's whole result, a run's report,
a job's outcome) and never fails the activity: metrics are a by-product. A run and a task
are counted once per worker process however often their report is rewritten (a retried
activity writes the same files again).

Each function imports the definitions (and so ``prometheus_client``) when it first records,
not when its activity's module is imported: Temporal's workflow sandbox re-imports the
modules a workflow's file imports (tests define workflows beside activities) and refuses
``prometheus_client``'s subclass of ``urllib.request``'s redirect handler.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable

from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import PHASE_MARKS, PhaseMark, RunReport, TaskResult, scoped

log = logging.getLogger("assay.metrics")

TERMINAL_PHASE = "done"
RETRIED_SUBPHASES = ("approval", "execution", "verification")
DEBUG_PHASE = "debug"


class Once:
    """Remembers the last ``size`` keys seen, so a rewritten report is not counted again."""

    def __init__(self, size: int = 20_000) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def first(self, key: str) -> bool:
        """True the first time ``key`` is offered (among the last ``size`` keys)."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return False
            self._seen[key] = None
            if len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True


_RUNS_SEEN = Once()
_TASKS_SEEN = Once()


def task_finished(run_id: str, result: TaskResult, *, once: Once = _TASKS_SEEN) -> bool:
    """Count a task's final status, its phases' durations, its retries and its gates' waits.

    Returns whether it was counted (False: this task of this run was counted before).
    """
    from activities.metrics import definitions as m

    if not once.first(f"{run_id}/{scoped(result.task_id, result.branch)}"):
        return False
    m.TASKS.labels(status=result.status).inc()
    for phase, seconds in phase_durations(result):
        m.PHASE_SECONDS.labels(phase=phase).observe(seconds)
    for subphase, count in retries(result).items():
        if count:
            m.RETRIES.labels(subphase=subphase).inc(count)
    gates_settled(result.provenance.approvals)
    return True


def run_finished(report: RunReport, *, once: Once = _RUNS_SEEN) -> bool:
    """Count a run's final status and the waits of its own gates (plan, branch).

    Returns whether it was counted (False: this run was counted before).
    """
    from activities.metrics import definitions as m

    if not once.first(report.run_id):
        return False
    m.RUNS.labels(status=report.status).inc()
    gates_settled(report.gates)
    return True


def phase_durations(result: TaskResult) -> list[tuple[str, float]]:
    """How long the task stayed in each phase it entered, in order (a phase may repeat).

    The last phase before ``done`` lasts until ``finished_at``; where the result's marks were
    cut to their first and last halves, the gap between the halves is not a duration.
    """
    marks: list[PhaseMark] = sorted(result.phases, key=lambda mark: mark.at)
    cut = len(marks) >= PHASE_MARKS
    spans: list[tuple[str, float]] = []
    for i, mark in enumerate(marks):
        if mark.phase == TERMINAL_PHASE or (cut and i == PHASE_MARKS // 2 - 1):
            continue
        end = marks[i + 1].at if i + 1 < len(marks) else result.finished_at
        if end is None:
            continue
        spans.append((mark.phase, max(0.0, (end - mark.at).total_seconds())))
    return spans


def retries(result: TaskResult) -> dict[str, int]:
    """Retries per subphase: attempts beyond the first, and the debuggers' rounds."""
    prov = result.provenance
    attempts = {"approval": prov.approval.attempts, "execution": prov.execution.attempts,
                "verification": prov.verification.attempts}
    counts = {name: max(0, attempts[name] - 1) for name in RETRIED_SUBPHASES}
    counts[DEBUG_PHASE] = sum(1 for mark in result.phases if mark.phase == DEBUG_PHASE)
    return counts


def gates_settled(gates: Iterable[GateRecord]) -> None:
    """Observe the wait of every decided gate."""
    from activities.metrics import definitions as m

    for gate in gates:
        if gate.decided_at is None:
            continue
        wait = max(0.0, (gate.decided_at - gate.opened_at).total_seconds())
        m.GATE_WAIT_SECONDS.labels(gate=gate.gate, decision=gate.status).observe(wait)


def job_ran(outcome: ExecutionOutcome) -> None:
    """Count a job attempt, its time, its CPU and its peak memory, by how it ended."""
    from activities.metrics import definitions as m

    kind = outcome.outcome
    m.SANDBOX_JOBS.labels(outcome=kind).inc()
    m.SANDBOX_SECONDS.labels(outcome=kind).observe(max(0.0, outcome.duration_s))
    m.SANDBOX_CPU_SECONDS.labels(outcome=kind).observe(max(0.0, outcome.cpu_s))
    m.SANDBOX_PEAK_MEMORY.labels(outcome=kind).observe(max(0.0, outcome.peak_memory_mb) * 2**20)


def skill_retrieved(found: bool) -> None:
    """Count one search of the skill library for a goal or a task."""
    from activities.metrics import definitions as m

    m.SKILL_RETRIEVALS.labels(result="hit" if found else "miss").inc()


def skill_used(succeeded: bool) -> None:
    """Count one use of a skill (a task ran its job), and its success."""
    from activities.metrics import definitions as m

    m.SKILL_USES.inc()
    if succeeded:
        m.SKILL_SUCCESSES.inc()


def memory_looked_up(lookup: str, found: bool) -> None:
    """Count one memory lookup (``consult`` or ``recall``) and whether it missed."""
    from activities.metrics import definitions as m

    m.MEMORY_LOOKUPS.labels(lookup=lookup).inc()
    if not found:
        m.MEMORY_MISSES.labels(lookup=lookup).inc()
