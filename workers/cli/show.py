"""How runs look on the terminal: the outcome of a run, its goal, answer and model use.

A run's workflow result says how each task ended; the detail (artifacts, checks, reviews,
provenance) is in the results JSON its report wrote, which :func:`load_report` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from activities.artifacts.store import ArtifactStore
from activities.events.format import short as printable_short
from activities.reports.markdown import describe_spend
from activities.reports.numbers import duration
from activities.reports.reading import result_report
from workflows.client import RunSummary
from workflows.common.words import plural
from workflows.contracts.executive import GateRecord
from workflows.contracts.results import ResearchResult, RunReport

SHORT_CHARS = 200


def short(text: str, limit: int = SHORT_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    return printable_short(text, limit)


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


def gate_line(run_id: str, gate: GateRecord, approvers: Sequence[str]) -> str:
    """The gate a run (or one of its tasks) waits at, and who may decide it and how.

    It also says how many decisions the gate refused so far.
    """
    refused = (f"; {plural(gate.refused_count, 'decision')} refused"
               if gate.refused_count else "")
    return (f"  waiting at the {gate.gate} gate since {gate.opened_at:%Y-%m-%d %H:%M}{refused}; "
            + decide_hint(run_id, gate, approvers))


def decision_lines(decided: Sequence[GateRecord], refused: Sequence[str]) -> list[str]:
    """Who settled each gate (when, their comment, the channel), then the latest refusals."""
    lines = [f"  {gate.gate} gate {short(gate.decided_text(), 300)}" for gate in decided]
    if refused:
        lines.append(f"  refused ({len(refused)} latest): {short(refused[-1], 300)}")
        lines += [f"    earlier: {short(line, 200)}" for line in refused[-3:-1]]
    return lines


def decide_hint(run_id: str, gate: GateRecord, approvers: Sequence[str]) -> str:
    """Who may decide ``gate`` and the exact command.

    For example ``decided by ada: assay approve RUN --gate plan --by ada``.
    """
    task = f" --task {gate.task_id}" if gate.task_id else ""
    command = f"assay approve {run_id} --gate {gate.gate}{task}"
    if not approvers:
        return f"anyone may decide: {command} [--by NAME]"
    names = ", ".join(short(name, 60) for name in approvers[:10])
    more = f" and {len(approvers) - 10} more" if len(approvers) > 10 else ""
    if len(approvers) == 1:
        return f"decided by {names}: {command} --by {names}"
    return f"decided by one of {names}{more}: {command} --by NAME"


def plan_hint(run_id: str) -> str:
    """The command that gives a goal run waiting for a plan its plan."""
    return f"waiting for a plan: assay plan {run_id} PLAN.json [--by NAME]"


def load_report(result: ResearchResult, store: ArtifactStore | None = None) -> RunReport | None:
    """The run's report, read from its results JSON; None if this machine cannot read it.

    Where the file is not on this machine (the orchestration pool wrote it on another
    host), it is read from ``store`` by the digest the report recorded.
    """
    return result_report(result, store)


def run_row(summary: RunSummary, now: datetime) -> list[str]:
    """One row of ``assay runs``: id, status, tasks, start, duration, goal.

    Tasks read ``1/2 done, 1 failed``: completed of planned, then those that ended otherwise.
    """
    started = datetime.fromisoformat(summary.start_time)
    ended = datetime.fromisoformat(summary.close_time) if summary.close_time else now
    return [summary.run_id, summary.shown_status,
            str(summary.tasks) if summary.tasks is not None else "-",
            started.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
            duration((ended - started).total_seconds(), whole=True), short(summary.goal, 60)]
