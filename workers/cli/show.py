"""How runs look on the terminal: the outcome of a run, its goal, answer and model use."""

from __future__ import annotations

from activities.reports.writer import describe_spend
from workflows.contracts.results import ResearchResult, RunProgress

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
    if result.report is not None:
        lines.append(f"report: {result.report.summary_md}")
        lines.append(f"results: {result.report.results_json}")
    lines.append(f"Web UI: {web_ui}/workflows/{result.run_id}")
    return lines


def waiting_for_plan(progress: RunProgress) -> bool:
    """Whether a run's progress says it waits for a person's plan (``assay plan``).

    A run that waits with no gate open and no tasks yet is a goal run waiting for a plan.
    """
    return progress.status == "waiting" and progress.waiting is None and not progress.order
