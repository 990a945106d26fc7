"""``assay watch`` lines: events in words, JSON lines for machines, each refusal shown once."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from activities.events.schema import StoredEvent
from workers.cli.watch import (
    Executions,
    Refusals,
    describe,
    refusal_line,
    watch_json,
    watch_line,
)
from workflows.contracts.execution import EventRecord
from workflows.contracts.gates import REFUSAL_CHARS, GateRecord
from workflows.contracts.plaintext import clip

T0 = datetime(2026, 11, 24, 2, 31, 5, tzinfo=UTC)


def event(event_type: str, subtype: str = "info", *, seq: int = 1, node: str = "run",
          **fields: Any) -> StoredEvent:
    record = EventRecord.model_validate({"id": f"e{seq}", "run_id": "r", "node_id": node,
                                         "event_type": event_type, "event_subtype": subtype,
                                         "timestamp": T0, **fields})
    return StoredEvent(seq=seq, recorded_at=T0, event=record)


@pytest.mark.parametrize(("stored", "text"), [
    (event("checkpoint", "start", inputs={"plan": "iris"}), "started: iris"),
    (event("checkpoint", status="planned", outputs={"tasks": 4}), "planned 4 tasks"),
    (event("checkpoint", status="planned", outputs={"tasks": 1}), "planned 1 task"),
    (event("checkpoint", status="planned", outputs={"tasks": "many"}), "planned ? tasks"),
    (event("checkpoint", status="plan_supplied", agent_name="ada",
           inputs={"plan": "p", "tasks": 1}), "plan p (1 task) supplied by ada"),
    (event("error", "error", agent_name="x", status="bad",
           outputs={"reason": "run plan p (1 tasks)? not 11 tasks"}),
     "error: x bad: run plan p (1 task)? not 11 tasks"),
    (event("checkpoint", status="plan_supplied", agent_name="person:ada",
           inputs={"plan": "p", "tasks": 2}), "plan p (2 tasks) supplied by ada"),
    (event("checkpoint", "complete", status="partial", outputs={"reason": "1 failed"}),
     "ended partial: 1 failed"),
    (event("checkpoint", node="2", status="execute"), "phase execute"),
    (event("approval", "pending", inputs={"gate": "plan", "approvers": ["ada", "bob"]}),
     "the plan gate waits for a decision by ada, bob"),
    (event("approval", "pending", inputs={"gate": "plan", "approvers": "ada"}),
     "the plan gate waits for a decision by anyone"),
    (event("approval", "complete", agent_name="ada", status="approved",
           inputs={"gate": "plan"}, outputs={"comment": "go"}),
     "the plan gate was approved by ada: go"),
    (event("approval", "complete", agent_name="ada", status="approved",
           inputs={"gate": "plan", "channel": "cli"}, outputs={"comment": "go"}),
     "the plan gate was approved by ada via cli: go"),
    (event("approval", "error", agent_name="eve", status="refused",
           outputs={"reason": "'eve' may not decide"}),
     "a decision by eve was refused: 'eve' may not decide"),
    (event("code_exec", "complete", status="succeeded", duration_ms=4210,
           outputs={"reason": "exited with status 0"}),
     "job succeeded in 4.2 s: exited with status 0"),
    (event("file_gen", "complete", agent_name="sandbox", outputs={"name": "a.png",
                                                                  "size": 2048}),
     "artifact a.png (2,048 bytes)"),
    (event("agent_call", "complete", agent_name="ops", status="REJECT",
           outputs={"reasoning": "x"}), "review by ops: rejected"),
    (event("handoff", "complete", status="failed", inputs={"task_id": "3"},
           outputs={"reason": "no evidence"}), "task 3 failed: no evidence"),
    (event("tool_call", "complete", agent_name="sandbox", status="environment_ready",
           outputs={"environment": "science@1afddadd3f57", "reused": True}),
     "environment science@1afddadd3f57 ready (reused)"),
    (event("error", "error", agent_name="sandbox", status="environment_refused",
           outputs={"reason": "package 'nosuchpkg' was not found"}),
     "environment refused: package 'nosuchpkg' was not found"),
])
def test_events_read_as_words(stored: StoredEvent, text: str) -> None:
    assert describe(stored.event) == text


def test_a_line_has_time_place_and_words_and_nothing_a_sender_could_inject() -> None:
    stored = event("approval", "error", node="2", agent_name="\x1b[2Jeve\n" + "e" * 500,
                   status="refused", outputs={"reason": "\x1b]0;pwned\x07" + "r" * 10_000})
    line = watch_line(stored)
    assert line.startswith("02:31:05  task 2      a decision by ")
    assert "\x1b" not in line and "\n" not in line and len(line) < 400


def test_json_lines_carry_the_event_and_its_text() -> None:
    stored = event("checkpoint", "complete", seq=7, status="completed")
    decoded = json.loads(watch_json(stored))
    assert decoded["seq"] == 7 and decoded["event"]["status"] == "completed"
    assert decoded["text"] == "ended completed" and "\n" not in watch_json(stored)


def test_a_refusal_seen_through_the_query_is_not_shown_again_as_its_event() -> None:
    refusals = Refusals()
    gate = GateRecord(gate="plan", opened_at=T0, refused=["eve: 'eve' may not decide"],
                      refused_count=1)
    assert refusals.new("run", gate) == ["eve: 'eve' may not decide"]
    assert refusals.new("run", gate) == []  # the same count: nothing new
    reason = "'eve' may not decide"
    assert refusals.seen(event("approval", "error", agent_name="eve", status="refused",
                               outputs={"reason": reason}))
    assert not refusals.seen(event("approval", "error", agent_name="eve", status="refused",
                                   outputs={"reason": reason}))  # a second one is shown
    more = gate.model_copy(update={"refused": [f"x{i}: no" for i in range(20)],
                                   "refused_count": 40})
    assert len(refusals.new("run", more)) == 20  # only the kept ones exist to show
    long = "y" * 1000
    assert refusals.new("2", GateRecord(gate="step", opened_at=T0, refused_count=1,
                                        refused=[clip(f"bob: {long}", REFUSAL_CHARS)]))
    assert refusals.seen(event("approval", "error", node="2", agent_name="bob",
                               status="refused", outputs={"reason": long}))


def test_a_refusal_reads_the_same_from_the_query_and_from_its_event() -> None:
    from_event = describe(event("approval", "error", agent_name="mallory", status="refused",
                                outputs={"reason": "'mallory' may not decide"}).event)
    from_query = refusal_line("run", "mallory: 'mallory' may not decide")
    assert from_query == f"run         {from_event}"
    assert from_event == "a decision by mallory was refused: 'mallory' may not decide"
    assert refusal_line("2", "no reason given") == (
        "task 2      a decision was refused: no reason given")


def test_a_reset_execution_is_announced_where_its_events_begin() -> None:
    executions = Executions()
    older = event("checkpoint", seq=1, execution="")
    first = [event("checkpoint", seq=n, execution="run-one") for n in (2, 3)]
    reset = [event("checkpoint", seq=n, execution="run-two") for n in (4, 5)]
    seen = [executions.new(e) for e in (older, *first, *reset, first[0])]
    assert seen == [None, None, None, "run-two", None, None]
