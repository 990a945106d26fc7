"""The events a run writes nest as it ran: run → task → phase → attempt or debugger → calls.

A real run on Temporal (the test server) whose job crashes and whose debuggers fix it; the
events the workflows wrote are put back together by ``parent_event_id`` and checked level by
level.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from activities.events.schema import StoredEvent
from activities.events.tree import EventNode, build_tree, walk
from tests.workflows.agents_fakes import FakeAgents, job, probe_environment, spend
from tests.workflows.common.test_gates import start
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branches import HOLD, PLAN, sweep, until_open, update
from workflows.contracts.execution import EventRecord
from workflows.contracts.roles import DebugAnswer

ON: dict[str, Any] = {"agents": {"enabled": True}, "tiering": "full"}
"""Models on, the task full: its first failure goes to the debuggers."""
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def fixed(strategy: Any, marker: str) -> DebugAnswer:
    return DebugAnswer(strategy=strategy, job=job(code=marker, args={"behave": ""}),
                       diagnosis=f"{strategy} fix", confidence=0.7, spend=spend("debugger"))


async def crash_then_fixed(env: WorkflowEnvironment, queue: str, root: Path,
                           ) -> list[EventRecord]:
    """The events of a run whose one job crashes and is fixed by the debuggers, in order."""
    agents = FakeAgents(fixes={
        "direct": fixed("direct", "# behave: ok\n# score: 0.5\nprint(1)\n"),
        "introspect": fixed("introspect", "# behave: ok\n# score: 0.8\nprint(2)\n"),
        "diagnostic_first": DebugAnswer(
            strategy="diagnostic", diagnostic_job=job("diagnose", filename="diagnose.py"),
            spend=spend("debugger")),
        "diagnostic": fixed("diagnostic", "# behave: ok\n# score: 0.8\nprint(3)\n")})
    harness = Harness(env, queue, root, overrides=agents.overrides(), extra=[probe_environment])
    report = await harness.run([task("a", code="# behave: crash\nprint(0)\n", behave="")], **ON)
    assert report.tasks[0].status == "completed", report.tasks[0].status_reason
    events = list(harness.sink.events.values())
    return sorted(events, key=lambda e: (e.node_id != "run", e.execution_order))


def children(node: EventNode, **match: str) -> list[EventNode]:
    """``node``'s children whose event fields equal ``match``."""
    return [c for c in node.children
            if all(getattr(c.stored.event, k) == v for k, v in match.items())]


def one(node: EventNode, **match: str) -> EventNode:
    found = children(node, **match)
    assert len(found) == 1, (match, [c.stored.event for c in node.children])
    return found[0]


async def test_a_crashed_job_fixed_by_debuggers_nests_task_phase_attempt_and_debugger(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    events = await crash_then_fixed(time_env, task_queue, tmp_path)
    stored = [StoredEvent(seq=i + 1, recorded_at=T0, event=e) for i, e in enumerate(events)]
    roots = build_tree(stored)
    assert [r.stored.event.status for r in roots] == ["running"]  # one tree, no orphans
    run = roots[0]
    assert (run.stored.event.node_id, run.stored.event.event_type) == ("run", "checkpoint")
    handed = one(run, event_type="handoff", event_subtype="start")
    assert one(handed, event_type="handoff", event_subtype="complete").stored.event.status \
        == "completed"
    task_root = one(handed, node_id="a", event_subtype="start")
    phases = [c.stored.event.status for c in task_root.children
              if c.stored.event.event_subtype == "info"]
    assert phases[:4] == ["implement", "review", "execute", "execution_retry"]
    assert "debug" in phases and phases[-2:] == ["finalize", "done"]
    execute = one(task_root, status="execute")
    attempt = one(execute, event_type="code_exec", event_subtype="start")
    assert attempt.stored.event.meta["attempt"] == 1
    assert one(attempt, event_type="code_exec", event_subtype="error").stored.event.status \
        == "nonzero_exit"
    review = one(task_root, status="review")
    assert {c.stored.event.agent_name for c in children(review, event_type="agent_call")} >= {
        "ops", "quality_safety", "infrastructure"}
    debug = one(task_root, status="debug")
    debuggers = {c.stored.event.agent_name: c
                 for c in children(debug, event_type="agent_call", event_subtype="start")}
    assert sorted(debuggers) == ["debugger_diagnostic", "debugger_direct",
                                 "debugger_introspect"]
    diagnostic = debuggers["debugger_diagnostic"]
    assert len(children(diagnostic, agent_name="debugger_diagnostic", status="answered")) == 2
    assert one(diagnostic, event_type="code_exec", agent_name="debugger_diagnostic")
    for name, debugger in debuggers.items():
        assert children(debugger, agent_name=name, status="answered")  # its model call(s)
        run_of_fix = one(debugger, event_type="code_exec", event_subtype="start")
        assert one(run_of_fix, event_type="code_exec", event_subtype="complete")
        assert one(debugger, agent_name="ops").stored.event.status == "APPROVE"  # its review
    depths = {node.stored.event.id: depth for depth, node in walk(roots)}
    assert all(e.depth == depths[e.id] for e in events), "stored depth is the tree's depth"
    assert len(depths) == len(events)


async def test_a_branch_nests_under_the_runs_hand_off_of_it_and_its_tasks_under_it(
        own_time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(own_time_env, task_queue, tmp_path)
    async with harness.worker():
        handle = await start(harness, PLAN, **HOLD)
        await until_open(handle)
        await update(handle, "start_branches", sweep(0.9))
        await update(handle, "steer_run", {"action": "close", "by": "ada"})
        await handle.result()
    events = list(harness.sink.events.values())
    roots = build_tree([StoredEvent(seq=i + 1, recorded_at=T0, event=e)
                        for i, e in enumerate(events)])
    assert len(roots) == 1 and roots[0].stored.event.node_id == "run"
    handed = one(roots[0], event_type="handoff", status="branch")
    assert one(handed, event_type="handoff", event_subtype="complete")
    branch = one(handed, node_id="branch-s-0.9", event_subtype="start")
    tasks = children(branch, event_type="handoff", event_subtype="start")
    assert [t.stored.event.inputs["task_id"] for t in tasks] == ["2", "3"]
    for t in tasks:
        scope = f"{t.stored.event.inputs['task_id']}.branch-s-0.9"
        assert one(t, node_id=scope, event_subtype="start").children
