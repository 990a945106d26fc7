"""Reflection's view of a run: events read as signals, and the four miners over them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.events.store import EventStore
from activities.reflection.mining import (
    artifact_consistency,
    divergence,
    frequency,
    mine,
    read_signals,
    temporal_correlation,
    to_signal,
)
from workflows.contracts.execution import EventRecord, EventSubtype, EventType, RecordEventsInput
from workflows.contracts.memory import Episode, Signal

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TYPE = "train-classifier"


def row(event_type: str, agent: str, status: str = "", *, subtype: str = "complete",
        node: str = "t1", seq: int = 7, **outputs: Any) -> dict[str, Any]:
    """An ``execution_events`` row as ``read_signals`` selects it."""
    return {"seq": seq, "node_id": node, "event_type": event_type, "event_subtype": subtype,
            "agent_name": agent, "status": status, "outputs": outputs}


# --- to_signal -----------------------------------------------------------------------------


def test_a_reviewer_verdict_is_an_approval_signal_with_its_flags() -> None:
    signal = to_signal(row("agent_call", "quality_safety", "REJECT", confidence=0.9,
                           critical=["calls os.system", "x" * 300]))
    assert signal == Signal(task_id="t1", phase="approval", signal_type="verdict",
                            agent="quality_safety", verdict="REJECT",
                            flags=["calls os.system", "x" * 200], confidence=0.9, seq=7)


def test_a_verdict_without_a_numeric_confidence_keeps_none() -> None:
    signal = to_signal(row("agent_call", "ops", "APPROVE", confidence=True, critical="oops"))
    assert signal is not None
    assert (signal.verdict, signal.confidence, signal.flags) == ("APPROVE", None, [])


def test_a_finished_sandbox_run_is_an_execution_signal_with_its_environment() -> None:
    signal = to_signal(row("code_exec", "sandbox", "out_of_memory", subtype="error",
                           environment="py3.11-numpy1.26", exit_code=137))
    assert signal == Signal(task_id="t1", phase="execution", signal_type="out_of_memory",
                            agent="sandbox", environment="py3.11-numpy1.26", seq=7)
    no_env = to_signal(row("code_exec", "sandbox", "succeeded", environment=None))
    assert no_env is not None and (no_env.signal_type, no_env.environment) == ("succeeded", "")


@pytest.mark.parametrize("status", ["pass", "fail"])
def test_a_verifier_result_is_a_verification_signal_with_what_is_missing(status: str) -> None:
    missing = ["results.csv", "y" * 250] if status == "fail" else []
    signal = to_signal(row("tool_call", "verifier", status, missing=missing))
    assert signal is not None
    assert (signal.phase, signal.signal_type, signal.agent) == ("verification", status,
                                                                "verifier")
    assert signal.missing == [m[:200] for m in missing]


def test_a_reflection_note_is_a_reflection_signal_with_its_root_cause() -> None:
    signal = to_signal(row("agent_call", "reflector", "retry", root_cause="out_of_memory",
                           confidence=0.9, note_id="ref-1"))
    assert signal == Signal(task_id="t1", phase="reflection", signal_type="note",
                            agent="reflector", root_cause="out_of_memory", confidence=0.9,
                            seq=7)


@pytest.mark.parametrize("event", [
    row("code_exec", "sandbox", "", subtype="start"),  # the run has not ended yet
    row("agent_call", "reflector", "missed", reason="reflection was unavailable"),
    row("agent_call", "ops", "missed"),  # a reviewer that gave no verdict
    row("agent_call", "coder", "APPROVE"),  # not a reviewer
    row("tool_call", "verifier", "skipped"),
    row("tool_call", "reflector", "patched", patch_id="patch-1"),
    row("file_gen", "sandbox", "created", name="results.csv"),
])
def test_events_reflection_does_not_read_are_ignored(event: dict[str, Any]) -> None:
    assert to_signal(event) is None


# --- read_signals --------------------------------------------------------------------------


@pytest.fixture
async def events(fresh_database_url: str) -> AsyncIterator[EventStore]:
    async with EventStore(fresh_database_url) as opened:
        yield opened


def event(run_id: str, n: int, event_type: EventType, agent: str, status: str, *,
          subtype: EventSubtype = "complete", node: str = "t1",
          **outputs: Any) -> EventRecord:
    return EventRecord(id=f"{run_id}:{n}", run_id=run_id, node_id=node, event_type=event_type,
                       event_subtype=subtype, agent_name=agent, status=status,
                       timestamp=T0 + timedelta(seconds=n), outputs=outputs)


@db
async def test_read_signals_reads_a_runs_events_oldest_first(events: EventStore) -> None:
    await events.record_events(RecordEventsInput(events=[
        event("run-1", 1, "agent_call", "ops", "APPROVE", confidence=0.9),
        event("run-1", 2, "code_exec", "sandbox", "", subtype="start"),
        event("run-1", 3, "code_exec", "sandbox", "out_of_memory", subtype="error",
              environment="env-a"),
        event("run-2", 4, "agent_call", "reflector", "retry", root_cause="timeout"),
        event("run-1", 5, "file_gen", "sandbox", "created", name="x.csv"),
        event("run-1", 6, "agent_call", "reflector", "retry", root_cause="out_of_memory"),
        event("run-1", 7, "tool_call", "verifier", "fail", node="t2", missing=["a.csv"]),
    ]))
    signals = await read_signals(events.engine, "run-1")
    assert [(s.task_id, s.phase, s.signal_type) for s in signals] == [
        ("t1", "approval", "verdict"), ("t1", "execution", "out_of_memory"),
        ("t1", "reflection", "note"), ("t2", "verification", "fail")]
    assert [s.seq for s in signals] == sorted(s.seq for s in signals)
    assert signals[1].environment == "env-a" and signals[3].missing == ["a.csv"]
    assert await read_signals(events.engine, "run-3") == []


@db
async def test_read_signals_limit_keeps_the_newest(events: EventStore) -> None:
    await events.record_events(RecordEventsInput(events=[
        event("run-1", n, "agent_call", "reflector", "retry", root_cause=f"cause-{n}")
        for n in range(1, 6)]))
    newest = await read_signals(events.engine, "run-1", limit=3)
    assert [s.root_cause for s in newest] == ["cause-3", "cause-4", "cause-5"]


# --- miners --------------------------------------------------------------------------------


def note(task: str, cause: str) -> Signal:
    return Signal(task_id=task, phase="reflection", signal_type="note", root_cause=cause)


def verdict(task: str, agent: str, ok: bool) -> Signal:
    return Signal(task_id=task, phase="approval", signal_type="verdict", agent=agent,
                  verdict="APPROVE" if ok else "REJECT")


def verified(task: str, *missing: str) -> Signal:
    return Signal(task_id=task, phase="verification", signal_type="fail" if missing else "pass",
                  missing=list(missing))


def ran(task: str, status: str, environment: str) -> Signal:
    return Signal(task_id=task, phase="execution", signal_type=status,
                  environment=environment)


def episode(n: int, *, outcome: str = "unfixed", root_cause: str = "out_of_memory",
            environment: str = "", run: str = "run-0") -> Episode:
    return Episode(episode_id=f"ep-{n}", recorded_at=T0 + timedelta(minutes=n), run_id=run,
                   task_id=f"task-{n}", task_type=TYPE, phase="execution", attempt=1,
                   root_cause="" if outcome == "success" else root_cause, outcome=outcome,
                   environment=environment)


def test_frequency_fires_on_a_root_cause_seen_twice_in_the_run() -> None:
    (pattern,) = frequency([note("t1", "out_of_memory"), note("t2", "out_of_memory"),
                            note("t3", "timeout")], [])
    assert (pattern.kind, pattern.key, pattern.count) == ("frequency", "out_of_memory", 2)
    assert pattern.tasks == ["t1", "t2"]
    assert pattern.detail == "out_of_memory seen 2 times"


def test_frequency_counts_the_failure_being_diagnosed_once_more() -> None:
    signals = [note("t1", "out_of_memory")]
    assert frequency(signals, []) == []
    (pattern,) = frequency(signals, [], root_cause="out_of_memory")
    assert (pattern.key, pattern.count, pattern.tasks) == ("out_of_memory", 2, ["t1"])
    assert frequency([], [], root_cause="out_of_memory") == []


def test_frequency_ignores_unknown_causes() -> None:
    signals = [note("t1", "unknown"), note("t2", "unknown")]
    episodes = [episode(1, root_cause="unknown"), episode(2, root_cause="unknown")]
    assert frequency(signals, episodes, root_cause="unknown") == []


def test_frequency_counts_failed_episodes_and_names_their_runs() -> None:
    episodes = [episode(1, run="run-a"), episode(2, outcome="fixed", run="run-b")]
    (pattern,) = frequency([], episodes)
    assert (pattern.key, pattern.count, pattern.tasks) == ("out_of_memory", 2, [])
    assert pattern.detail == "out_of_memory seen 2 times (in 2 earlier runs)"


def test_frequency_ignores_episodes_that_succeeded() -> None:
    successes = [episode(n, outcome="success").model_copy(update={"root_cause": "timeout"})
                 for n in (1, 2, 3)]
    assert frequency([], successes) == []
    assert frequency([], successes, root_cause="timeout") == []


def test_divergence_fires_on_a_split_panel() -> None:
    panel = [verdict("t1", "ops", True), verdict("t1", "quality_safety", False),
             verdict("t1", "infrastructure", True)]
    (pattern,) = divergence(panel)
    assert (pattern.kind, pattern.key, pattern.count, pattern.tasks) == (
        "divergence", "spec_ambiguity", 1, ["t1"])


def test_divergence_is_silent_on_a_unanimous_panel() -> None:
    approve = [verdict("t1", r, True) for r in ("ops", "quality_safety", "infrastructure")]
    reject = [verdict("t2", r, False) for r in ("ops", "quality_safety", "infrastructure")]
    assert divergence([*approve, *reject]) == []


def test_divergence_reads_only_each_reviewers_latest_verdict() -> None:
    healed = [verdict("t1", "ops", False), verdict("t1", "quality_safety", True),
              verdict("t1", "ops", True)]  # the retry's panel agrees
    assert divergence(healed) == []
    split = [verdict("t2", "ops", True), verdict("t2", "quality_safety", True),
             verdict("t2", "quality_safety", False)]  # the retry's panel does not
    (pattern,) = divergence([*healed, *split])
    assert pattern.tasks == ["t2"]


def test_artifact_consistency_fires_on_the_same_name_missing_in_two_tasks() -> None:
    (pattern,) = artifact_consistency([verified("t1", "results.csv", "plot.png"),
                                       verified("t2", "results.csv"), verified("t3")])
    assert (pattern.kind, pattern.key, pattern.count) == ("artifact_consistency",
                                                          "results.csv", 2)
    assert pattern.tasks == ["t1", "t2"]


def test_artifact_consistency_is_silent_when_one_task_misses_it() -> None:
    again = [verified("t1", "results.csv"), verified("t1", "results.csv")]  # one task, twice
    assert artifact_consistency(again) == []


def test_temporal_correlation_fires_when_failures_follow_an_environment_change() -> None:
    episodes = [episode(1, outcome="success", environment="env-a"),
                episode(2, environment="env-b"),
                episode(3, environment="env-b", root_cause="missing_dependency")]
    (pattern,) = temporal_correlation(list(reversed(episodes)))  # read newest first
    assert (pattern.kind, pattern.key, pattern.count) == ("temporal_correlation",
                                                          "env-a -> env-b", 2)
    assert "missing_dependency, out_of_memory" in pattern.detail


def test_temporal_correlation_counts_this_runs_failures_in_the_new_environment() -> None:
    (pattern,) = temporal_correlation([episode(1, outcome="success", environment="env-a")],
                                      [ran("t1", "out_of_memory", "env-b")])
    assert (pattern.key, pattern.count) == ("env-a -> env-b", 1)


def test_temporal_correlation_is_silent_once_the_new_environment_succeeded() -> None:
    episodes = [episode(1, outcome="success", environment="env-a"),
                episode(2, environment="env-b"),
                episode(3, outcome="success", environment="env-b"),
                episode(4, environment="env-b")]
    assert temporal_correlation(episodes) == []


def test_temporal_correlation_is_silent_without_an_earlier_success() -> None:
    episodes = [episode(1, environment="env-a"), episode(2, environment="env-b")]
    assert temporal_correlation(episodes) == []
    assert temporal_correlation([], [ran("t1", "timeout", "env-b")]) == []


def test_mine_reads_the_environment_history_of_the_failing_task_only() -> None:
    history = [episode(1, outcome="success", environment="env-a")]
    signals = [ran("t1", "out_of_memory", "env-b"), ran("t2", "succeeded", "env-b")]
    kinds = [p.kind for p in mine(signals, history, task_id="t1")]
    assert kinds == ["temporal_correlation"]
    assert mine(signals, history) == []  # t2's success under env-b clears env-b
