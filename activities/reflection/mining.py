"""R0-R1: a run's phase outcomes as signals, and the patterns mined from them and from memory.

Signals are read from the event store, never re-collected: every reviewer verdict, job run,
evidence check and reflection note of a run is already an event (see
:mod:`workflows.task.review` and :mod:`workflows.task.execution`). The miners are pure
functions over signals and episodes:

- *frequency*: one root cause seen at least twice (this run's notes and memory's episodes);
- *divergence*: a review panel split between approval and rejection (the spec is ambiguous);
- *artifact consistency*: the same expected evidence missing in several tasks of the run;
- *temporal correlation*: a task type that succeeded in one job environment and fails in
  the one that replaced it (a package or interpreter change).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.events.schema import EVENTS
from database.limits import fit_key
from workflows.contracts.memory import Episode, Signal
from workflows.contracts.reflection import Pattern
from workflows.contracts.words import plural

MAX_SIGNALS = 5_000
"""Most events one diagnosis reads from a run (the newest are kept)."""
REVIEWERS = ("ops", "quality_safety", "infrastructure")
FREQUENT = 2
"""A root cause seen this many times is a pattern."""


async def read_signals(engine: AsyncEngine, run_id: str, *,
                       limit: int = MAX_SIGNALS) -> list[Signal]:
    """The run's phase outcomes, oldest first (at most ``limit``, the newest kept)."""
    stmt = (select(EVENTS.c.seq, EVENTS.c.node_id, EVENTS.c.event_type,
                   EVENTS.c.event_subtype, EVENTS.c.agent_name, EVENTS.c.status,
                   EVENTS.c.outputs)
            .where(EVENTS.c.run_id == fit_key(run_id),
                   EVENTS.c.event_type.in_(("agent_call", "code_exec", "tool_call")))
            .order_by(EVENTS.c.seq.desc()).limit(limit))
    async with engine.connect() as conn:
        rows = (await conn.execute(stmt)).mappings().all()
    signals = [s for row in reversed(rows) if (s := to_signal(dict(row))) is not None]
    return signals


def to_signal(row: dict[str, Any]) -> Signal | None:
    """One stored event as a signal, or ``None`` for events reflection does not read."""
    outputs = cast("dict[str, Any]", row.get("outputs") or {})
    agent, kind, status = row["agent_name"], row["event_type"], row.get("status") or ""
    task_id, seq = row["node_id"], int(row.get("seq") or 0)
    if kind == "agent_call" and agent in REVIEWERS and status in ("APPROVE", "REJECT"):
        critical = _strings(outputs.get("critical"))
        return Signal(task_id=task_id, phase="approval", signal_type="verdict", agent=agent,
                      verdict=status, flags=[c[:200] for c in critical][:20],
                      confidence=_number(outputs.get("confidence")), seq=seq)
    if kind == "code_exec" and agent == "sandbox" and row["event_subtype"] != "start":
        return Signal(task_id=task_id, phase="execution", signal_type=status, agent=agent,
                      environment=str(outputs.get("environment") or ""), seq=seq)
    if kind == "tool_call" and agent == "verifier" and status in ("pass", "fail"):
        missing = _strings(outputs.get("missing"))
        return Signal(task_id=task_id, phase="verification", signal_type=status, agent=agent,
                      missing=[m[:200] for m in missing][:50], seq=seq)
    if kind == "agent_call" and agent == "reflector" and outputs.get("root_cause"):
        return Signal(task_id=task_id, phase="reflection", signal_type="note", agent=agent,
                      root_cause=str(outputs["root_cause"])[:200],
                      confidence=_number(outputs.get("confidence")), seq=seq)
    return None


def _strings(value: Any) -> list[str]:
    """A JSON list as strings (anything else: empty)."""
    return [str(v) for v in cast("list[Any]", value)] if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def mine(signals: Sequence[Signal], episodes: Sequence[Episode], *,
         root_cause: str | None = None, task_id: str | None = None) -> list[Pattern]:
    """Every pattern in a run's signals and a task type's episodes (R1).

    ``task_id`` is the failing task: the environment history is read from its own runs
    (the episodes are of its task type already).
    """
    own = [s for s in signals if task_id is None or s.task_id == task_id]
    return [*frequency(signals, episodes, root_cause=root_cause), *divergence(signals),
            *artifact_consistency(signals), *temporal_correlation(episodes, own)]


def frequency(signals: Sequence[Signal], episodes: Sequence[Episode], *,
              root_cause: str | None = None) -> list[Pattern]:
    """Root causes seen at least twice: this run's notes plus memory's failed attempts.

    ``root_cause`` (the failure being diagnosed) counts once more: it has not been
    recorded yet when reflection reads the run.
    """
    counts: Counter[str] = Counter()
    tasks: dict[str, set[str]] = defaultdict(set)
    seen_runs: dict[str, set[str]] = defaultdict(set)
    for s in signals:
        if s.phase == "reflection" and s.root_cause and s.root_cause != "unknown":
            counts[s.root_cause] += 1
            tasks[s.root_cause].add(s.task_id)
    for e in episodes:
        if e.root_cause and e.root_cause != "unknown" and e.outcome != "success":
            counts[e.root_cause] += 1
            seen_runs[e.root_cause].add(e.run_id)
    if root_cause and root_cause != "unknown":
        counts[root_cause] += 1
    return [Pattern(kind="frequency", key=cause, count=n, tasks=sorted(tasks[cause]),
                    detail=f"{cause} seen {n} times"
                           + (f" (in {len(seen_runs[cause])} earlier runs)"
                              if seen_runs[cause] else ""))
            for cause, n in sorted(counts.items()) if n >= FREQUENT]


def divergence(signals: Sequence[Signal]) -> list[Pattern]:
    """Tasks whose last review panel split: some reviewers approved, some rejected."""
    latest: dict[str, dict[str, str]] = defaultdict(dict)
    for s in signals:
        if s.phase == "approval":
            latest[s.task_id][s.agent] = s.verdict
    split = sorted(t for t, verdicts in latest.items() if len(set(verdicts.values())) > 1)
    if not split:
        return []
    return [Pattern(kind="divergence", key="spec_ambiguity", count=len(split), tasks=split,
                    detail="reviewers disagreed on the same job: the task's spec is ambiguous "
                           "(its action, checks or acceptance criteria)")]


def artifact_consistency(signals: Sequence[Signal]) -> list[Pattern]:
    """Evidence missing in two or more tasks of the run: a plan-level cause, not one job's."""
    missing: dict[str, set[str]] = defaultdict(set)
    for s in signals:
        if s.phase == "verification" and s.signal_type == "fail":
            for name in s.missing:
                missing[name].add(s.task_id)
    return [Pattern(kind="artifact_consistency", key=name, count=len(tasks),
                    tasks=sorted(tasks),
                    detail=f"{name} is missing in {len(tasks)} tasks: check how the plan "
                           "declares it rather than each job")
            for name, tasks in sorted(missing.items()) if len(tasks) >= FREQUENT]


def temporal_correlation(episodes: Sequence[Episode],
                         signals: Iterable[Signal] = ()) -> list[Pattern]:
    """Failures that began when the job environment changed.

    Fires when the task type succeeded under one environment, has failed under a later one,
    and has never succeeded under the later one.
    """
    history = sorted((e for e in episodes if e.environment), key=lambda e: e.recorded_at)
    events = [(e.environment, e.outcome == "success", e.root_cause) for e in history]
    events.extend((s.environment, s.signal_type == "succeeded", s.signal_type)
                  for s in signals if s.phase == "execution" and s.environment)
    good = [env for env, ok, _ in events if ok]
    if not good or not events:
        return []
    last_env = events[-1][0]
    if last_env in good:
        return []
    failures = [cause for env, ok, cause in events if env == last_env and not ok]
    if not failures:
        return []
    before = good[-1]
    return [Pattern(kind="temporal_correlation", key=f"{before} -> {last_env}",
                    count=len(failures),
                    detail=f"{plural(len(failures), 'failure')} "
                           f"({', '.join(sorted(set(failures)))}) since "
                           f"the job environment changed from {before} to {last_env}; it "
                           "never succeeded in the new one")]
