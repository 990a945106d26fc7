"""``assay study status|report``, ``assay hypotheses`` and ``assay stop``: see and end studies.

A study's progress query answers with its whole compact state (every cycle's headline, the
hypothesis tree), so these read it rather than each cycle's run; ``--wait`` polls it and
prints one line per cycle as it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workers.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_STOPPED,
    ByOption,
    client_for,
    fail,
    outcome_exit,
    print_table,
    run_async,
)
from workers.cli.fields import InputError, signed
from workers.settings import Settings
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from client.assay import AssayClient
    from client.study import StudyClient
    from workflows.contracts.cycles import StudyProgress, StudyResult
    from workflows.contracts.hypotheses import Hypothesis
    from workflows.contracts.results import RunProgress
    from workflows.contracts.study import CycleSummary, StudyPolicy

TICK_S = 1.0
"""How often ``--wait`` asks a study how it stands."""
CHOICES_HINT = "[--choose iterate|fix|stop|pivot:H] [--reject]"


def study_client(assay: AssayClient) -> StudyClient:
    """The study client on ``assay``'s connection and orchestration queue."""
    from client.study import StudyClient

    return StudyClient(assay.client, task_queue=assay.task_queue)


async def _studies() -> StudyClient:
    return study_client(await client_for(Settings()))


def status(study_id: Annotated[str, typer.Argument(metavar="STUDY")],
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show a study's phase and cycle, what it waits for, and each cycle's decision."""
    async def go() -> None:
        assay = await client_for(Settings())
        studies = study_client(assay)
        progress = await studies.progress(study_id)
        if as_json:
            typer.echo(progress.model_dump_json(indent=2))
            return
        ended = (await studies.summary(study_id)).shown_status
        approvers = ((await studies.started_with(study_id)).policy.gates.cycle.approvers
                     if progress.waiting is not None else [])
        running = await running_cycle(assay, progress)
        for line in status_lines(progress, ended, approvers, running):
            typer.echo(line)
        print_table(["CYCLE", "RUN", "STATUS", "KEY", "DECISION", "REASON"],
                    [cycle_row(s, progress.state.policy) for s in progress.state.summaries])

    run_async(go())


async def running_cycle(assay: AssayClient, progress: StudyProgress) -> RunProgress | None:
    """How the running cycle's run stands (None: no cycle runs, or its run cannot say yet)."""
    from temporalio.service import RPCError

    if progress.phase != "cycle" or not progress.run_id:
        return None
    try:
        return await assay.progress(progress.run_id)
    except RPCError:  # not started yet, or a query no worker answers now
        return None


def status_lines(progress: StudyProgress, shown: str, approvers: list[str],
                 running: RunProgress | None = None) -> list[str]:
    """The headline of ``assay study status``: status, phase, spend, what the study waits for.

    ``shown`` is the study's status (``running``, or how it ended); ``running`` is the
    running cycle's run, whose spend so far and planned hypotheses are counted in.
    """
    from workers.cli.show import decision_lines, short

    state, sid = progress.state, progress.study_id
    lines = [f"study {sid}: {shown} (phase {progress.phase}), cycle {progress.cycle} of at "
             f"most {state.policy.max_cycles}"]
    lines.append(f"  goal: {short(state.goal)}" if state.goal else
                 f"  first plan: {state.first_plan}")
    lines.append(f"  {spend_text(progress, running)} (assay hypotheses {sid})")
    if progress.run_id and progress.phase == "cycle":
        lines.append(f"  cycle {progress.cycle} runs as {progress.run_id} "
                     f"(assay status {progress.run_id})")
    if wait := waiting_text(progress, approvers):
        lines.append(f"  {wait}")
    if progress.stop is not None:
        lines.append(f"  stop asked by {progress.stop.by} ({progress.stop.channel or 'temporal'})"
                     ": it ends after the running cycle")
    return [*lines, *decision_lines([], progress.refused)]


def spend_text(progress: StudyProgress, running: RunProgress | None) -> str:
    """What the study has spent and how many hypotheses it has, the running cycle's included."""
    state = progress.state
    budget = f" of ${state.policy.budget_usd:.2f}" if state.policy.budget_usd else ""
    known = {h.id for h in state.tree.hypotheses}
    new = [h for h in running.hypotheses if h not in known] if running else []
    spent = state.spent_usd + (running.spent_usd if running else 0.0)
    so_far = (f" (${running.spent_usd:.2f} of it by cycle {progress.cycle} so far)"
              if running else "")
    planned = f", {len(new)} of them planned in cycle {progress.cycle}" if new else ""
    count = plural(len(known) + len(new), "hypothesis", "hypotheses")
    return f"spent ${spent:.2f}{budget}{so_far}; {count}{planned}"


def waiting_text(progress: StudyProgress, approvers: list[str]) -> str:
    """What the study waits for from a person, and the command that answers it ("": none)."""
    from workers.cli.show import decide_hint, short

    sid, gate = progress.study_id, progress.waiting
    if gate is not None:
        return (f"waiting at the cycle gate since {gate.opened_at:%Y-%m-%d %H:%M}: "
                f"{short(gate.question)}; {decide_hint(sid, gate, approvers)} {CHOICES_HINT}")
    if progress.needs_plan:
        return (f"waiting for the plan of cycle {progress.state.cycles + 1}: "
                f"assay plan {sid} PLAN.json [--by NAME]")
    return ""


def cycle_row(summary: CycleSummary, policy: StudyPolicy) -> list[str]:
    """One cycle as ``assay study status`` lists it."""
    from workers.cli.show import short

    decision = summary.decision
    return [str(summary.cycle), summary.run_id, summary.status, key_text(summary, policy),
            f"{decision.action} ({short(decision.who(), 160)})" if decision else "-",
            short(decision.reason, 120) if decision else ""]


def key_text(summary: CycleSummary, policy: StudyPolicy) -> str:
    """``name = value [low, high] (task T)`` of the cycle's key metric (``-``: none reported).

    The interval is there when the key value's task wrote it as an estimate.
    """
    from workflows.study.rules import key_shown

    if summary.key_value is None:
        return "-"
    name = policy.key_metric.name if policy.key_metric else "key"
    source = f" (task {summary.key_task})" if summary.key_task else ""
    return f"{name} = {key_shown(summary)}{source}"


def cycle_line(summary: CycleSummary, policy: StudyPolicy) -> str:
    """What ``--wait`` prints when a cycle closes."""
    number, run_id, status, key, decision, reason = cycle_row(summary, policy)
    return f"cycle {number} ({run_id}): {status}, {key}; {decision}: {reason}"


def report(study_id: Annotated[str, typer.Argument(metavar="STUDY")]) -> None:
    """Print an ended study's report (Markdown); for a running one, say where it will be."""
    async def go() -> None:
        studies = await _studies()
        if await studies.status(study_id) == "running":
            folder = Settings().root / "studies" / study_id
            typer.echo(f"study {study_id} is still running; its report is written after each "
                       f"cycle into {folder} (see `assay study status {study_id}`)")
            return
        result = await studies.result(study_id)
        if result.report is None:
            fail(f"study {study_id} ended ({result.status}: {result.reason}) without a report")
        try:
            typer.echo(Path(result.report.summary_md).read_text(encoding="utf-8"))
        except OSError as err:
            fail(f"the report of {study_id} cannot be read here ({result.report.summary_md}: "
                 f"{err.strerror}); it was written on the machine of the orchestration pool")

    run_async(go())


def hypotheses(study_id: Annotated[str, typer.Argument(metavar="STUDY")],
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show a study's hypothesis tree: each one's parent, status, test and evidence."""
    async def go() -> None:
        tree = (await (await _studies()).progress(study_id)).state.tree
        if as_json:
            typer.echo(tree.model_dump_json(indent=2))
            return
        if not tree.hypotheses:
            typer.echo(f"study {study_id} has no hypotheses yet (its plans propose them)")
            return
        print_table(["ID", "PARENT", "STATUS", "TEST", "EVIDENCE", "STATEMENT"],
                    [hypothesis_row(h) for h in tree.hypotheses])

    run_async(go())


def hypothesis_row(item: Hypothesis) -> list[str]:
    """One hypothesis as ``assay hypotheses`` lists it."""
    from workers.cli.show import short

    evidence = ", ".join(f"{e.metric}={e.value if e.ci is None else e.value_text()} "
                         f"({e.task_id}, cycle {e.cycle})" for e in item.evidence)
    decided = f" in cycle {item.decided_in}" if item.decided_in else ""
    return [item.id, item.parent or "-", f"{item.status}{decided}", item.test.describe(),
            evidence or "-", short(item.statement, 80)]


def stop(study_id: Annotated[str, typer.Argument(metavar="STUDY")], by: ByOption = None,
         comment: Annotated[str, typer.Option("--comment", "-m")] = "") -> None:
    """Stop a study after the cycle that runs (one waiting for a plan or a gate ends now)."""
    from client.study import StudyRefusedError
    from workflows.contracts.cycles import StudyStop

    try:
        asked = signed(StudyStop, by or Settings().user, comment, "stop")
    except InputError as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        try:
            await (await _studies()).stop(study_id, asked)
        except StudyRefusedError as err:
            fail(f"refused: {err}")
        typer.echo(f"study {study_id} will stop after the cycle that runs (by {asked.by})")

    run_async(go())


async def follow_study(studies: StudyClient, study_id: str,
                       echo: Callable[[str], None]) -> StudyResult:
    """The study's result, one line printed per cycle as it closes (and what it waits for).

    A study stopped without a result (cancelled, terminated) exits :data:`EXIT_STOPPED`.
    """
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import CancelledError, TerminatedError, TimeoutError

    waiter = asyncio.ensure_future(studies.result(study_id))
    seen = Seen()
    while not waiter.done():
        await seen.show(studies, study_id, echo)
        await asyncio.wait([waiter], timeout=TICK_S)
    try:
        result = waiter.result()
    except WorkflowFailureError as err:
        if isinstance(err.cause, CancelledError | TerminatedError | TimeoutError):
            fail(f"study {study_id} was {type(err.cause).__name__.removesuffix('Error').lower()}"
                 f" and has no result: {err.cause}", EXIT_STOPPED)
        raise
    await seen.show(studies, study_id, echo)
    return result


class Seen:
    """What ``--wait`` has printed: the cycles closed and the last thing waited for."""

    def __init__(self) -> None:
        self.cycles = 0
        self.waiting = ""
        self.approvers: list[str] | None = None
        """Who may decide the study's cycle gate (read once, when it first waits)."""

    async def show(self, studies: StudyClient, study_id: str,
                   echo: Callable[[str], None]) -> None:
        """Print the cycles closed since last time, and a new wait (best effort)."""
        progress = None
        with contextlib.suppress(Exception):  # progress is best effort; the result decides
            progress = await studies.progress(study_id)
        if progress is None:
            return
        closed = progress.state.summaries
        if progress.phase == "deciding" or progress.waiting is not None:
            closed = closed[:-1]  # its decision is not final yet
        for summary in closed[self.cycles:]:
            echo(cycle_line(summary, progress.state.policy))
        self.cycles = max(self.cycles, len(closed))
        if progress.waiting is not None and self.approvers is None:
            with contextlib.suppress(Exception):
                started = await studies.started_with(study_id)
                self.approvers = started.policy.gates.cycle.approvers
        text = waiting_text(progress, self.approvers or [])
        if text and text != self.waiting:
            echo(text)
        self.waiting = text


def outcome(result: StudyResult, *, as_json: bool) -> int:
    """Print how the study ended; the exit code (0 completed, else like a run's outcome)."""
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        typer.echo(f"study {result.study_id}: {result.status} after "
                   f"{plural(result.cycles, 'cycle')}: {result.reason}")
        if result.report is not None:
            typer.echo(f"report: {result.report.summary_md}")
            typer.echo(f"results: {result.report.results_json}")
    return outcome_exit(result.status)
