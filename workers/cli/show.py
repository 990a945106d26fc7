"""How runs look on the terminal: the outcome of a run, its goal, answer and model use.

A run's workflow result says how each task ended; the detail (artifacts, checks, reviews,
provenance) is in the results JSON its report wrote, which :func:`load_report` reads.
"""

from __future__ import annotations

from pathlib import Path

from activities.reports.markdown import describe_spend
from workflows.contracts.executive import GateRecord
from workflows.contracts.results import (
    ResearchResult,
    RunProgress,
    RunReport,
    TaskResult,
)

SHORT_CHARS = 200


def short(text: str, limit: int = SHORT_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def summary_lines(result: ResearchResult) -> list[str]:
    """Why the run ended as it did, its goal, the short answer and model use (when any)."""
    lines: list[str] = []
    if result.status_reason:
        lines.append(f"  reason: {short(result.status_reason)}")
    if result.goal:
        lines.append(f"  goal: {short(result.goal)}")
    if result.answer is not None:
        lines.append(f"  answer: {short(result.answer.answer)}")
    if result.model.calls:
        lines.append(f"  model: {describe_spend(result.model)}")
    return lines


def outcome_lines(result: ResearchResult, web_ui: str) -> list[str]:
    """What ``assay run --wait`` prints once the run has finished."""
    lines = [f"run {result.run_id}: {result.status}", *summary_lines(result)]
    for task in result.tasks:
        lines.append(f"  task {task.task_id:<8} {task.status:<13} {task.status_reason}")
    if not result.tasks and result.task_counts:
        lines.append("  tasks: " + ", ".join(f"{n} {s}" for s, n in result.task_counts.items()))
    if result.report is not None:
        lines.append(f"report: {result.report.summary_md}")
        lines.append(f"results: {result.report.results_json}")
    lines.append(f"Web UI: {web_ui}/workflows/{result.run_id}")
    return lines


def gate_line(run_id: str, gate: GateRecord) -> str:
    """The gate a run (or one of its tasks) waits at, and the decisions it refused so far."""
    task = f" --task {gate.task_id}" if gate.task_id else ""
    refused = (f"; {gate.refused_count} decision{'s' if gate.refused_count != 1 else ''} "
               "refused" if gate.refused_count else "")
    return (f"  waiting at the {gate.gate} gate since {gate.opened_at:%Y-%m-%d %H:%M}{refused}: "
            f"assay approve {run_id} --gate {gate.gate}{task}")


def load_report(result: ResearchResult) -> RunReport | None:
    """The run's report, read from its results JSON; None if this machine cannot read it."""
    if result.report is None:
        return None
    try:
        text = Path(result.report.results_json).read_text(encoding="utf-8")
        return RunReport.model_validate_json(text)
    except (OSError, ValueError):
        return None


def outline_report(result: ResearchResult) -> RunReport:
    """A report made from the run's result alone: each task's status and reason, no detail."""
    missing = "its detail: the results JSON could not be read on this machine"
    tasks = [TaskResult(task_id=t.task_id, priority=t.priority, action=t.action,
                        status=t.status, status_reason=t.status_reason,
                        attempts_total=t.attempts_total, artifacts_total=t.artifact_count,
                        omitted=[missing])
             for t in result.tasks]
    return RunReport(**result.run_fields(), tasks=tasks)


def waiting_for_plan(progress: RunProgress) -> bool:
    """Whether a run's progress says it waits for a person's plan (``assay plan``).

    A run that waits with no gate open and no tasks yet is a goal run waiting for a plan.
    """
    return progress.status == "waiting" and progress.waiting is None and not progress.order
