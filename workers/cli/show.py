"""How runs look on the terminal: the outcome of a run, its goal, answer and model use.

A run's workflow result says how each task ended; the detail (artifacts, checks, reviews,
provenance) is in the results JSON its report wrote, which :func:`load_report` reads.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from activities.artifacts.store import ArtifactStore
from activities.events.format import short as printable_short
from activities.reports.markdown import describe_spend
from activities.reports.numbers import duration
from activities.reports.reading import result_report
from client.assay import RunSummary
from client.runs import short_execution
from workflows.contracts.gates import GateRecord
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchResult, RunReport
from workflows.contracts.words import plural

SHORT_CHARS = 200
REASON_CHARS = 20_000
"""The most of one task's reason ``--wait`` prints (wrapped): whole, in practice."""
WIDTH = 100
RESULTS_GLOB = "execution_results_*.json"


def short(text: str, limit: int = SHORT_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    return printable_short(text, limit)


def summary_lines(result: ResearchResult, *, replayed: bool = False) -> list[str]:
    """Why the run ended as it did, its goal, the short answer and model use (when any).

    A gate that rejected the run says who rejected it, when, and their comment. With
    ``replayed`` (the run's model answers came from a recording), the cost is said to be the
    recorded one: nothing was spent.
    """
    lines: list[str] = []
    if result.status_reason:
        lines.append(f"  reason: {short(result.status_reason)}")
    lines += [f"  {rejection(gate)}" for gate in result.gates if gate.status == "rejected"]
    if result.goal:
        lines.append(f"  goal: {short(result.goal)}")
    if result.answer is not None:
        lines.append(f"  answer: {short(result.answer.answer)}")
    if result.model.calls:
        spent = (" (replayed from a recording: the cost is the recorded one; nothing was "
                 "spent)" if replayed else "")
        lines.append(f"  model: {describe_spend(result.model)}{spent}")
    return lines


def replays(policy: RunPolicy) -> bool:
    """True when a run with ``policy`` answers from a recording: its cost was not spent."""
    recording = policy.agents.recording
    return recording is not None and recording.mode == "replay"


def rejection(gate: GateRecord) -> str:
    """``rejected at the plan gate by ada on 2026-11-28 05:40: not this data``."""
    task = f" of task {gate.task_id}" if gate.task_id else ""
    by = f" by {short(gate.by, 60)}" if gate.by else ""
    when = f" on {gate.decided_at:%Y-%m-%d %H:%M}" if gate.decided_at else ""
    why = f": {short(gate.comment)}" if gate.comment else " (no comment given)"
    return f"rejected at the {gate.gate} gate{task}{by}{when}{why}"


def wrapped(head: str, text: str) -> list[str]:
    """``head`` then ``text`` wrapped to :data:`WIDTH`, continued under where it began."""
    body = textwrap.wrap(short(text, REASON_CHARS), max(WIDTH - len(head), 40)) or [""]
    return [f"{head}{body[0]}".rstrip(), *(" " * len(head) + line for line in body[1:])]


def outcome_lines(result: ResearchResult, web_ui: str, *,
                  reasons: Mapping[str, str] | None = None, replayed: bool = False) -> list[str]:
    """What ``assay run --wait`` prints once the run has finished.

    Each task's reason is whole and wrapped: from ``reasons`` (its report's, uncut) when
    given, else as the run's result kept it.
    """
    lines = [f"run {result.run_id}: {result.status}",
             *summary_lines(result, replayed=replayed)]
    for task in result.tasks:
        reason = (reasons or {}).get(task.task_id, task.status_reason)
        lines += wrapped(f"  task {task.task_id:<8} {task.status:<13} ", reason)
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


def report_file(runs_dir: Path, run_id: str) -> Path | None:
    """The newest results JSON a run's report wrote under ``runs_dir`` (None: none is here)."""
    if not run_id or Path(run_id).name != run_id or run_id in (".", ".."):
        return None
    found = sorted((runs_dir / run_id).glob(RESULTS_GLOB))
    return found[-1] if found else None


def archive_report(runs_dir: Path, report: RunReport) -> Path:
    """Pack the run's report folder beside it as ``<run>_report_<ts>.tar.gz``; its path.

    The folder is the one the results JSON is in (the run's, also for a reset execution's
    report); every member carries the run's start as its time.

    Raises:
        ArchiveError: no report folder here, or one that cannot be packed (the message
            says why).
    """
    from activities.reports.archive import ArchiveError, pack
    from activities.reports.writer import RESET_PREFIX

    folder = runs_dir / report.run_id
    if report.report is not None and Path(report.report.results_json).is_file():
        folder = Path(report.report.results_json).parent
        if folder.name.startswith(RESET_PREFIX):
            folder = folder.parent
    if not folder.is_dir():
        raise ArchiveError(f"the report folder of {report.run_id} is not on this machine "
                           f"({folder}); archive it where the orchestration pool wrote it")
    dest = folder.parent / f"{folder.name}_report_{report.timestamp}.tar.gz"
    return pack(folder, dest, mtime=int(report.started_at.timestamp()))


def run_row(summary: RunSummary, now: datetime, *, execution: bool = False) -> list[str]:
    """One row of ``assay runs``: id, status, tasks, start, duration, goal.

    Tasks read ``1/2 done, 1 failed``: completed of planned, then those that ended otherwise.
    With ``execution`` (a run listed more than once: it was reset), the id is followed by
    its execution's short run id, ``run-x @1a2b3c4d5e6f``.
    """
    started = datetime.fromisoformat(summary.start_time)
    ended = datetime.fromisoformat(summary.close_time) if summary.close_time else now
    name = summary.run_id
    if execution and summary.execution:
        name += f" @{short_execution(summary.execution)}"
    return [name, summary.shown_status,
            str(summary.tasks) if summary.tasks is not None else "-",
            started.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
            duration((ended - started).total_seconds(), whole=True), short(summary.goal, 60)]
