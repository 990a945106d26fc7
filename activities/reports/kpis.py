"""The planning KPIs of a run from its report: pure functions (``workflows.contracts.kpis``).

The run's report writer puts them in the results JSON and the Markdown; a study's report
shows each cycle's.
"""

from __future__ import annotations

from workflows.contracts.kinds import task_kind
from workflows.contracts.kpis import (
    ESTIMATION_TARGET,
    HIGH_COMPLETION_TARGET,
    Estimate,
    Kpis,
)
from workflows.contracts.kpis import accuracy as accuracy
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.words import plural


def estimates(tasks: list[TaskResult], estimated: dict[str, float]) -> list[Estimate]:
    """Each completed task's estimate against its time, where it has both."""
    found: list[Estimate] = []
    for task in tasks:
        guess = estimated.get(task.task_id)
        if (guess is None or guess <= 0 or task.status != "completed"
                or task.started_at is None or task.finished_at is None):
            continue
        actual = max(0.0, (task.finished_at - task.started_at).total_seconds())
        found.append(Estimate(task_id=task.task_id, kind=task_kind(task.action, task.job),
                              estimated_s=guess, actual_s=actual,
                              accuracy=round(accuracy(guess, actual), 4)))
    return found


def by_kind(found: list[Estimate]) -> dict[str, float]:
    """The mean accuracy per task kind, kinds in name order."""
    kinds = sorted({e.kind for e in found})
    return {k: round(sum(e.accuracy for e in found if e.kind == k)
                     / sum(e.kind == k for e in found), 4) for k in kinds}


def run_kpis(report: RunReport) -> Kpis:
    """The KPIs of a run: completion, estimation, priority calibration, dependencies."""
    tasks, deps = report.tasks, report.dependencies
    table = report.completion_by_priority
    high = table.get("HIGH")
    found = estimates(tasks, report.estimated_s)
    mean = round(sum(e.accuracy for e in found) / len(found), 4) if found else None
    upstream = {d for ds in deps.values() for d in ds}
    status = {t.task_id: t.status for t in tasks}
    stopped = [t for t in tasks if t.status not in ("completed", "cancelled")]
    return Kpis(
        completion=table,
        high_completion_met=None if high is None else high["rate"] >= HIGH_COMPLETION_TARGET,
        estimates=found, estimation_accuracy=mean,
        estimation_met=None if mean is None else mean >= ESTIMATION_TARGET,
        accuracy_by_kind=by_kind(found),
        high_blocking=[t.task_id for t in tasks if t.priority == "HIGH"
                       and t.task_id in upstream],
        high_not_blocking=[t.task_id for t in tasks if t.priority == "HIGH"
                           and t.task_id not in upstream],
        low_blocking=[t.task_id for t in tasks if t.priority == "LOW" and t.task_id in upstream],
        planned_blocks=[t.task_id for t in stopped if _planned(deps.get(t.task_id), status)],
        unplanned_blockers=[t.task_id for t in stopped
                            if not _planned(deps.get(t.task_id), status)])


def _planned(deps: list[str] | None, status: dict[str, str]) -> bool:
    """Whether a planned dependency of the task did not complete."""
    return any(status.get(d, "completed") != "completed" for d in deps or [])


def markdown(kpis: Kpis) -> list[str]:
    """The KPIs as Markdown lines (a section's body)."""
    def mark(met: bool | None) -> str:
        return "" if met is None else " (target met)" if met else " (below target)"

    high = kpis.completion.get("HIGH")
    lines = [f"- HIGH completion: {high['rate']:.0%} of {int(high['total'])}, target ≥ "
             f"{HIGH_COMPLETION_TARGET:.0%}{mark(kpis.high_completion_met)}" if high
             else "- HIGH completion: no HIGH task"]
    if kpis.estimation_accuracy is None:
        lines.append("- Estimation accuracy: no completed task had a time estimate")
    else:
        each = ", ".join(f"`{e.task_id}` {e.accuracy:.0%}" for e in kpis.estimates[:20])
        lines.append(f"- Estimation accuracy: {kpis.estimation_accuracy:.0%}, target ≥ "
                     f"{ESTIMATION_TARGET:.0%}{mark(kpis.estimation_met)} ({each})")
        kinds = ", ".join(f"{k} {v:.0%}" for k, v in list(kpis.accuracy_by_kind.items())[:20])
        lines.append(f"- Estimation accuracy by task kind: {kinds}")
    lines.append(f"- Priority calibration: {len(kpis.high_blocking)} HIGH task(s) blocked "
                 f"later work{_ids(', not: ', kpis.high_not_blocking)}"
                 f"{_ids('; LOW tasks that did: ', kpis.low_blocking)}")
    lines.append(f"- Dependency correctness: "
                 f"{plural(len(kpis.unplanned_blockers), 'unplanned blocker')}"
                 f"{_ids(' (', kpis.unplanned_blockers, ')')}, "
                 f"{plural(len(kpis.planned_blocks), 'task')} stopped by a planned dependency")
    return lines


def _ids(head: str, ids: list[str], tail: str = "") -> str:
    if not ids:
        return ""
    shown = ", ".join(f"`{i}`" for i in ids[:20])
    return f"{head}{shown}{' …' if len(ids) > 20 else ''}{tail}"


def cycles_table(by_cycle: dict[int, Kpis]) -> list[str]:
    """A study's KPIs, one row per cycle (no lines when no cycle's report was read)."""
    if not by_cycle:
        return []
    lines = ["", "## Planning KPIs by cycle", "",
             f"HIGH completion target ≥ {HIGH_COMPLETION_TARGET:.0%}, estimation accuracy "
             f"target ≥ {ESTIMATION_TARGET:.0%}.", "",
             "| cycle | HIGH completion | estimation accuracy | HIGH that blocked | "
             "unplanned blockers |", "| ---: | ---: | ---: | ---: | ---: |"]
    for cycle, kpis in sorted(by_cycle.items()):
        high = kpis.completion.get("HIGH")
        rate = f"{high['rate']:.0%}" if high else "—"
        est = (f"{kpis.estimation_accuracy:.0%}" if kpis.estimation_accuracy is not None
               else "—")
        highs = len(kpis.high_blocking) + len(kpis.high_not_blocking)
        lines.append(f"| {cycle} | {rate} | {est} | {len(kpis.high_blocking)}/{highs} "
                     f"| {len(kpis.unplanned_blockers)} |")
    return lines
