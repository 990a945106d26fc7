"""``assay status RUN``: how a run stands or ended, its tasks, and what waits for whom.

Temporal's status comes first: a run Temporal terminated, timed out or cancelled is reported
as such (with its reason, exit code 8) whatever its last query said, and no gate of it is
offered for a decision. A running task shows the gate it waits at and who may decide it, or
the activity it waits on: a job's heartbeat, the attempt, and why the last attempt failed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from workers.cli.common import client_for, run_async, stopped_exit
from workers.settings import Settings

if TYPE_CHECKING:
    from client.assay import AssayClient
    from client.runs import RunSummary
    from workers.cli.progress import Snapshot
    from workflows.contracts.results import RunProgress


def status(run_id: str,
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show a run's phase, times and task tally, its tasks (a job's heartbeat too), who decides."""
    code = run_async(_status(run_id, as_json=as_json))
    raise typer.Exit(code)


async def _status(run_id: str, *, as_json: bool) -> int:
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    client = await client_for(Settings())
    summary = await client.describe_run(run_id)
    try:
        progress = await client.progress(run_id)
    except (WorkflowQueryFailedError, RPCError):
        if not summary.stopped:  # a stopped run that cannot answer is still told of
            raise
        progress = None
    if as_json:
        typer.echo(_json(summary, progress))
    elif progress is None:
        typer.echo(f"run {run_id}: {summary.stopped_text()}")
        typer.echo("  its tasks cannot be read: the run no longer answers queries")
    else:
        for line in await _lines(client, summary, progress):
            typer.echo(line)
    return stopped_exit(summary.status)


def _json(summary: RunSummary, progress: RunProgress | None) -> str:
    """The run's progress as JSON; a stopped run's ``status`` is Temporal's, with its reason."""
    shown = progress.model_dump(mode="json") if progress is not None else {
        "run_id": summary.run_id}
    if summary.stopped:
        shown.update(status=summary.status, stop_reason=summary.stop_reason)
    return json.dumps(shown, indent=2)


async def _lines(client: AssayClient, summary: RunSummary, progress: RunProgress) -> list[str]:
    from workers.cli.progress import snapshot
    from workers.cli.show import summary_lines

    run_id = summary.run_id
    started = datetime.fromisoformat(summary.start_time)
    snap = await snapshot(client, run_id, started, progress)
    if summary.close_time:  # elapsed until it ended, not until now
        snap = replace(snap, at=datetime.fromisoformat(summary.close_time))
    lines = [_headline(summary, progress),
             f"  started {started.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
             f"{'; ended' if summary.close_time else '; now'} {snap.headline()}"]
    reasons: dict[str, str] = {}
    if summary.status == "completed":
        result = await client.result(run_id)
        lines += summary_lines(result, replayed=bool(result.model.calls)
                               and await _replayed(client, run_id))
        reasons = {t.task_id: t.status_reason for t in result.tasks}
    elif summary.goal:
        from workers.cli.show import short

        lines.append(f"  goal: {short(summary.goal)}")
    from workers.cli.show import decision_lines

    return [*lines, *_waits(summary, progress),
            *decision_lines(progress.decided, progress.refused), *_task_lines(snap, reasons)]


async def _replayed(client: AssayClient, run_id: str) -> bool:
    """True when the run's model answers came from a recording (its input's policy says so)."""
    from client.linking import started_input
    from workers.cli.show import replays
    from workflows.contracts.results import ResearchInput

    started = await started_input(client.client, run_id, ResearchInput)
    return started is not None and replays(started.policy)


def _headline(summary: RunSummary, progress: RunProgress) -> str:
    if summary.stopped:
        return (f"run {summary.run_id}: {summary.stopped_text()} "
                f"(it stood {progress.status} in phase {progress.phase})")
    return f"run {summary.run_id}: {progress.status} (phase {progress.phase})"


def _waits(summary: RunSummary, progress: RunProgress) -> list[str]:
    """What the run waits for from a person, and how to give it."""
    from client.runs import waiting_for_plan
    from workers.cli.common import describe_command
    from workers.cli.show import gate_line, plan_hint

    run_id = summary.run_id
    if summary.stopped:
        return ["  nothing waits: no gate of it takes a decision now; its history: "
                f"`{describe_command(run_id)}`"]
    if summary.status != "running":
        return []
    if progress.waiting is not None:
        return [gate_line(run_id, progress.waiting, progress.approvers)]
    if waiting_for_plan(progress):
        return [f"  {plan_hint(run_id)}"]
    if progress.phase == "open":
        return [f"  its tasks have ended and it is held open for branches; no gate waits. "
                f"End it (its report is then written) with `assay close {run_id}`, or branch "
                f"it with `assay branch {run_id} --from TASK ...`"]
    return []


LISTED_TASKS = 200
"""Past this many tasks, status lists the counts and the tasks neither completed nor pending."""


def _task_lines(snap: Snapshot, reasons: dict[str, str]) -> list[str]:
    """Each task's status and, once the run has ended, why (``reasons``).

    A running task's phase and activity, or the gate it waits at.
    """
    from workers.cli.progress import beat_text
    from workers.cli.show import gate_line, short

    progress, lines = snap.progress, list[str]()
    order = progress.order
    if len(order) > LISTED_TASKS:  # a large run: the counts, and the tasks not done or waiting
        counts = Counter(progress.tasks.get(t, "pending") for t in order)
        lines.append("  tasks: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        order = [t for t in order if progress.tasks.get(t, "pending")
                 not in ("completed", "pending")]
        if len(order) > LISTED_TASKS:
            lines.append(f"  the first {LISTED_TASKS} of {len(order)} not completed nor "
                         "pending (every task: `assay status RUN --json`, the report's files)")
            order = order[:LISTED_TASKS]
    for tid in order:
        now = snap.live.get(tid)
        doing = f"  {now.phase}  {beat_text(now, snap.at)}".rstrip() if now else ""
        why = f"  {short(reasons[tid])}" if reasons.get(tid) else ""
        lines.append(f"  task {tid:<8} {progress.tasks.get(tid, 'pending')}{doing}{why}")
        if now is not None and now.waiting is not None:
            lines.append("  " + gate_line(progress.run_id, now.waiting, now.approvers))
    return lines
