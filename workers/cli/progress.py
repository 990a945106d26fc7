"""Live progress of a run while ``assay run --wait`` follows it.

Each second the run's progress and its running tasks (phase, and the heartbeat of the
activity each waits on: a job's elapsed time, output size and last printed line) are read into
a :class:`Snapshot`. Changes become timestamped lines on stderr — ``02:31:05  +1 min 04 s
task 2: completed``, then once per poll ``tasks 2/4 done, 1 failed`` — and, on a terminal, a
rich live footer shows what runs now; piped, the same facts come as plain lines (a job's
heartbeat once its job first prints a line, then at most every :data:`BEAT_EVERY_S` seconds).
A job's elapsed time is counted here from its activity's start, and its last printed line is
shown with how old it is: the server keeps a heartbeat only every 0.8 x the heartbeat timeout.
Heartbeats come from jobs, so their text is shown bounded and reduced to printable characters.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from activities.events.format import short
from activities.reports.numbers import byte_size, duration
from client.runs import TaskLive, TaskTally, waiting_for_plan
from workers.cli.reconnect import await_result
from workers.cli.show import decide_hint, plan_hint
from workflows.contracts.plaintext import plain_text
from workflows.contracts.results import ResearchResult, RunProgress

if TYPE_CHECKING:
    from rich.console import Console

    from client.assay import AssayClient

BEAT_EVERY_S = 10.0
"""Plain lines show a task's heartbeat as soon as its job first prints a line (or this long
after it was first seen without one), then at most this often."""
LAST_LINE_CHARS = 200
"""The most of a job's last printed line shown."""
TICK_S = 1.0


def clock(at: datetime) -> str:
    """``at`` as ``HH:MM:SS`` (UTC)."""
    return at.astimezone(UTC).strftime("%H:%M:%S")


def _number(beat: Mapping[str, Any], key: str) -> float | None:
    value = beat.get(key)
    return float(value) if isinstance(value, int | float) and value >= 0 else None


def beat_text(live: TaskLive, now: datetime | None = None) -> str:
    """What a task's pending activity does, e.g. ``execute_job 12 s, 4.1 KiB out``.

    Then its job's last printed line and how old it is: ``; last output 8 s ago: epoch 3``.
    The elapsed time runs from the current attempt's start to ``now`` (the job's own figure
    when the start is unknown); the last line's age is counted from the heartbeat that carried
    it. A retried activity says which attempt runs (``execute_job attempt 2 3 s``) and why the
    one before failed (``; attempt 1 failed: DiskFull: ...``).
    """
    parts = [short(live.activity, 40)] if live.activity else []
    if live.attempt > 1:
        parts.append(f"attempt {live.attempt}")
    beat = live.heartbeat or {}
    elapsed = _number(beat, "elapsed_s")
    if now is not None and live.started is not None:
        elapsed = (now - live.started).total_seconds()
    if elapsed is not None:
        parts.append(duration(elapsed, whole=True))
    if (out := _number(beat, "stdout_bytes")) is not None:
        parts[-1:] = ([f"{parts[-1]}, {byte_size(out)} out"] if parts
                      else [f"{byte_size(out)} out"])
    text = " ".join(parts)
    line = beat.get("last_line")
    if isinstance(line, str) and (shown := short(plain_text(line), LAST_LINE_CHARS)):
        age = ("" if now is None or live.beat_at is None
               else f" {duration((now - live.beat_at).total_seconds(), whole=True)} ago")
        text += f"; last output{age}: {shown}"
    if live.last_failure:
        failed = short(plain_text(live.last_failure), LAST_LINE_CHARS)
        text += f"; attempt {max(live.attempt - 1, 1)} failed: {failed}"
    return text


@dataclass(frozen=True)
class Snapshot:
    """A run as read at one moment."""

    at: datetime
    started: datetime
    progress: RunProgress
    live: dict[str, TaskLive] = field(default_factory=dict[str, TaskLive])

    @property
    def stamp(self) -> str:
        """``HH:MM:SS  +elapsed``."""
        return (f"{clock(self.at)}  "
                f"+{duration((self.at - self.started).total_seconds(), whole=True)}")

    def tally(self) -> TaskTally:
        """How the planned tasks stand: completed, ended otherwise, planned."""
        return TaskTally.of(self.progress.tasks.get(t, "pending") for t in self.progress.order)

    def headline(self) -> str:
        """Time, elapsed, ``tasks k/n done, m failed`` and the running tasks' phases."""
        progress = self.progress
        tally = self.tally()
        if not tally.total:
            return f"{self.stamp}  phase {progress.phase} ({progress.status})"
        running = ", ".join(f"{tid} {self.live[tid].phase if tid in self.live else 'running'}"
                            for tid in progress.order if progress.tasks.get(tid) == "running")
        return f"{self.stamp}  tasks {tally}" + (f"  running: {running}" if running else "")


def hint(snap: Snapshot) -> str | None:
    """What the run waits for from a person, and the command that gives it."""
    progress = snap.progress
    if progress.waiting is not None:
        return (f"  the {progress.waiting.gate} gate waits; "
                + decide_hint(progress.run_id, progress.waiting, progress.approvers))
    if waiting_for_plan(progress):
        return f"  {plan_hint(progress.run_id)}"
    return None


@dataclass
class Changes:
    """Turns successive snapshots into the lines worth printing (each fact once)."""

    beats: bool
    """Also print heartbeat lines (plain output: nothing else shows them)."""
    _phase: str = ""
    _statuses: dict[str, str] = field(default_factory=dict[str, str])
    _phases: dict[str, str] = field(default_factory=dict[str, str])
    _beats: dict[str, tuple[str, datetime]] = field(default_factory=dict[str, tuple[str, datetime]])
    _seen: dict[str, datetime] = field(default_factory=dict[str, datetime])
    _attempts: dict[str, int] = field(default_factory=dict[str, int])
    _hints: set[str] = field(default_factory=set[str])

    def lines(self, snap: Snapshot) -> list[str]:
        """The new facts in ``snap``: run phase, task statuses and phases, hints, beats.

        Task changes come first and, when there are any, the tasks' tally once after them; a
        run's final phase comes after its tasks' last changes.
        """
        progress = snap.progress
        run: list[str] = []
        phase = progress.phase + (f" ({progress.status})" if progress.phase == "done" else "")
        if phase != self._phase:  # once done, its final status is news too
            self._phase = phase
            run.append(f"{snap.stamp}  run: {progress.phase} ({progress.status})")
        tasks = self._task_lines(snap)
        if tasks:
            tasks.append(f"{snap.stamp}  tasks {snap.tally()}")
        out = [*tasks, *run] if progress.phase == "done" else [*run, *tasks]
        if (text := hint(snap)) is not None and text not in self._hints:
            self._hints.add(text)
            out.append(text)
        if self.beats:
            out.extend(self._beat_lines(snap))
        return out

    def _task_lines(self, snap: Snapshot) -> list[str]:
        out: list[str] = []
        progress = snap.progress
        for tid in progress.order:
            status = progress.tasks.get(tid, "pending")
            phase = snap.live[tid].phase if tid in snap.live else ""
            if phase == "done":  # a task about to report its end: its status says it
                phase = self._phases.get(tid, "")
            if tid not in self._statuses and status == "pending":  # all start so: no news
                self._statuses[tid] = status
                continue
            if self._statuses.get(tid) != status or (phase and self._phases.get(tid) != phase):
                self._statuses[tid], self._phases[tid] = status, phase
                shown = f"{status} ({phase})" if phase and status == "running" else status
                out.append(f"{snap.stamp}  task {tid}: {shown}")
        return out

    def _beat_lines(self, snap: Snapshot) -> list[str]:
        out: list[str] = []
        for tid, live in snap.live.items():
            retried = live.attempt != self._attempts.setdefault(tid, live.attempt)
            if retried:  # a new attempt is news at once: its elapsed time starts again
                self._attempts[tid] = live.attempt
                self._beats[tid] = (beat_text(live, snap.at), snap.at)
                out.append(f"{snap.stamp}  task {tid}: {self._beats[tid][0]}")
                continue
            if not live.heartbeat:
                continue
            text = beat_text(live, snap.at)
            first_seen = self._seen.setdefault(tid, snap.at)
            last = self._beats.get(tid)
            since = (snap.at - (last[1] if last else first_seen)).total_seconds()
            printed = "; last output" in text
            first_line = printed and (last is None or "; last output" not in last[0])
            if first_line or (text != (last[0] if last else "") and since >= BEAT_EVERY_S):
                self._beats[tid] = (text, snap.at)
                out.append(f"{snap.stamp}  task {tid}: {text}")
        return out


def footer(snap: Snapshot) -> list[str]:
    """The live footer on a terminal: the headline, then each running task's heartbeat."""
    return [snap.headline(), *(f"  task {tid}: {live.phase}  {beat_text(live, snap.at)}".rstrip()
                               for tid, live in snap.live.items())]


async def snapshot(client: AssayClient, run_id: str, started: datetime,
                   progress: RunProgress | None = None) -> Snapshot:
    """The run now, with each running task's phase and heartbeat.

    ``progress`` is the run's, when the caller has just queried it: a query of a run that has
    ended replays its whole history on a worker, so it is not asked twice. A task that cannot
    answer (not started yet, or just ended) is left out.
    """
    if progress is None:
        progress = await client.progress(run_id)
    live: dict[str, TaskLive] = {}
    for tid in progress.order:
        if progress.tasks.get(tid) == "running":
            with contextlib.suppress(Exception):
                live[tid] = await client.task_live(run_id, tid)
    return Snapshot(at=datetime.now(UTC), started=started, progress=progress, live=live)


class Footer:
    """A rich live footer on a terminal, with the lines of changes printed above it."""

    def __init__(self, console: Console) -> None:
        from rich.live import Live

        self.console = console
        self.live = Live(console=console, transient=True, auto_refresh=False)

    def echo(self, line: str) -> None:
        """Print ``line`` above the footer (its brackets are text, not markup)."""
        from rich.text import Text

        self.console.print(Text(line))

    def show(self, snap: Snapshot) -> None:
        """Redraw the footer for ``snap``."""
        from rich.text import Text

        self.live.update(Text("\n".join(footer(snap))), refresh=True)


async def follow(client: AssayClient, run_id: str, *, console: Console | None = None,
                 echo: Callable[[str], None]) -> ResearchResult:
    """Await a run's result while showing its progress.

    On ``console`` (a terminal) changes are printed above a live footer; without one they
    are plain lines through ``echo``, heartbeats included.
    """
    started = datetime.fromisoformat((await client.describe_run(run_id)).start_time)
    changes = Changes(beats=console is None)
    drawn = Footer(console) if console is not None else None
    say = drawn.echo if drawn is not None else echo
    waiter = asyncio.ensure_future(await_result(client, run_id, say))
    with drawn.live if drawn is not None else contextlib.nullcontext():
        while not waiter.done():
            snap = None
            with contextlib.suppress(Exception):  # progress is best effort; the result decides
                snap = await snapshot(client, run_id, started)
            if snap is not None:
                for line in changes.lines(snap):
                    say(line)
                if drawn is not None:
                    drawn.show(snap)
            await asyncio.wait([waiter], timeout=TICK_S)
    result = waiter.result()
    for line in changes.lines(ended(result, started)):
        say(line)
    return result


def ended(result: ResearchResult, started: datetime) -> Snapshot:
    """The last snapshot of a run: its tasks as its result says they ended."""
    progress = RunProgress(run_id=result.run_id, phase="done", status=result.status,
                           tasks={t.task_id: t.status for t in result.tasks},
                           order=[t.task_id for t in result.tasks])
    return Snapshot(at=datetime.now(UTC), started=started, progress=progress)
