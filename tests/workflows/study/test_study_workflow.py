"""The study workflow on the time-skipping server: cycles run as child runs, hypotheses
decided by verified metrics, the rules' decision confirmed or overridden at the ``cycle``
gate, plans supplied by a person, stops, continue-as-new between cycles.

The fake sandbox reports a job's ``score`` argument as its metric, so which hypothesis a
cycle supports or refutes is known in advance; the runs' reports are written by the real
report writer and read back by the real ``close_cycle``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.reports.writer import ReportWriter
from activities.study.cycles import StudyCycles
from client.assay import DATA_CONVERTER
from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, all_on, task
from workflows.constants import cycle_run_id, study_workflow_id
from workflows.contracts.cycles import (
    CyclePlan,
    StudyInput,
    StudyProgress,
    StudyReportInput,
    StudyResult,
)
from workflows.contracts.plan import Plan
from workflows.contracts.policy import GateRule, RunPolicy
from workflows.contracts.results import ReportPaths, ResearchInput, RunProgress
from workflows.contracts.study import StudyPolicy, StudyState
from workflows.study.workflow import StudyWorkflow

CYCLES = StudyCycles()
QUERY_TIMEOUT = timedelta(seconds=1)
"""How long one progress query may wait: one asked while the study continues as new gets no
answer."""

H1: dict[str, Any] = {"id": "H1", "statement": "a small step fits", "test": {
    "metric": "score", "op": ">", "threshold": 0.8}}
H2: dict[str, Any] = {"id": "H2", "statement": "a larger step fits", "test": {
    "metric": "score", "op": ">", "threshold": 0.8}}
ACCEPT: dict[str, Any] = {"acceptance": [{"metric": "score", "op": ">=", "threshold": 0.9}],
          "key_metric": {"name": "score", "direction": "maximize"}}


class StudyReports:
    """Keeps every study report the workflow asked to write."""

    def __init__(self) -> None:
        self.written: list[StudyReportInput] = []

    async def write(self, req: StudyReportInput) -> ReportPaths:
        self.written.append(req)
        return ReportPaths(results_json="study.json", summary_md="study.md")


def cycle_plan(n: int, score: float, hypothesis: str, *proposals: dict[str, Any],
               by: str = "", reuse: list[str] | None = None) -> CyclePlan:
    fit = task(f"fit{n}", score=score)
    fit["hypothesis"] = hypothesis
    if reuse:
        fit["reuse"] = reuse
    plan = Plan.model_validate({"decisions": [fit], "hypotheses": list(proposals)})
    sha = hashlib.sha256(plan.model_dump_json().encode()).hexdigest()
    return CyclePlan(plan_name=f"cycle-{n}", plan_sha256=sha, plan=plan, by=by)


class Study:
    """A harness for one study: a worker serving every queue, real reports and close_cycle."""

    def __init__(self, env: WorkflowEnvironment, queue: str, root: Path,
                 agents: dict[str, Any] | None = None, extra: list[Any] | None = None) -> None:
        self.env = env
        self.reports = StudyReports()
        # the reports keep copies from the store the fake sandbox puts artifacts in
        writer = ReportWriter(root / "runs", LocalArtifactStore(root / "store"))
        self.harness = Harness(env, queue, root, overrides={
            "write_report": writer.write_report, "write_task_report": writer.write_task_report,
            "write_study_report": self.reports.write, **(agents or {})},
            extra=[CYCLES.close_cycle, CYCLES.resolve_reuse, *(extra or [])])

    def input(self, plans: list[CyclePlan], *, goal: str | None = None,
              gate: dict[str, Any] | None = None, **study: Any) -> StudyInput:
        state = StudyState(study_id=study_workflow_id("test", uuid.uuid4().hex),
                           goal=goal, first_plan=None if goal else "cycle-1@test",
                           policy=StudyPolicy.model_validate({"max_cycles": 5, **study}))
        policy = RunPolicy.model_validate({"skills": {"enabled": False},
                                           **({"gates": {"cycle": gate}} if gate else {})})
        return StudyInput(state=state, plans=plans, policy=policy,
                          queues=all_on(self.harness.queue))

    async def start(self, inp: StudyInput) -> WorkflowHandle[StudyWorkflow, StudyResult]:
        started = await self.env.client.start_workflow(
            StudyWorkflow.run, inp, id=inp.state.study_id, task_queue=self.harness.queue)
        self.first_run = started.first_execution_run_id
        # not bound to the first execution: queries and signals reach the study's latest
        return self.env.client.get_workflow_handle_for(StudyWorkflow.run, inp.state.study_id)

    async def until(self, handle: WorkflowHandle[Any, Any], what: str,
                    holds: Callable[[StudyProgress], bool]) -> StudyProgress:
        """Until the study's progress answers so that ``holds``; the last answer."""
        seen: list[StudyProgress] = []

        async def check() -> bool:
            try:
                seen.append(await handle.query("progress", result_type=StudyProgress,
                                               rpc_timeout=QUERY_TIMEOUT))
            except RPCError:  # between two executions (continue-as-new) a query may time out:
                # asked again at once rather than after the client's default of 10 s
                return False
            return bool(holds(seen[-1]))
        await wait_for(check, timeout=60, what=what)
        return seen[-1]


@pytest.fixture
def time_env(own_time_env: WorkflowEnvironment) -> WorkflowEnvironment:
    """A server of each test's own: a study's timers never move another test's time."""
    return own_time_env


@pytest.fixture
async def study(time_env: WorkflowEnvironment, task_queue: str,
                tmp_path: Path) -> AsyncIterator[Study]:
    made = Study(time_env, task_queue, tmp_path)
    async with made.harness.worker():
        yield made


async def cycle_input(env: WorkflowEnvironment, run_id: str) -> ResearchInput:
    """The input a cycle's run was started with (from its history's first event)."""
    history = await env.client.get_workflow_handle(run_id).fetch_history()
    payload = history.events[0].workflow_execution_started_event_attributes.input.payloads[0]
    return DATA_CONVERTER.payload_converter.from_payload(payload, ResearchInput)


async def test_a_refuted_hypothesis_pivots_and_the_supported_one_meets_the_goal(
        study: Study, time_env: WorkflowEnvironment) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      **ACCEPT)
    handle = await study.start(inp)
    result = await handle.result()

    assert (result.status, result.cycles) == ("completed", 2), result.reason
    assert result.decision is not None and result.decision.action == "stop"
    assert result.reason == "acceptance criteria met: score = 0.95 (task fit2) >= 0.9"
    final = study.reports.written[-1]
    assert final.status == "completed" and [w.status for w in study.reports.written] == [
        "running", "completed"]
    state = final.state
    tree = {h.id: h for h in state.tree.hypotheses}
    assert (tree["H1"].status, tree["H1"].decided_in) == ("refuted", 1)
    assert [(e.task_id, e.value) for e in tree["H1"].evidence] == [("fit1", 0.5)]
    assert (tree["H2"].status, tree["H2"].decided_in) == ("supported", 2)
    first = state.summaries[0].decision
    assert first is not None and (first.action, first.pursue) == ("pivot", "H2")
    assert state.summaries[0].results_json.endswith(".json")
    # the second cycle was told where the study stood: its pivot, and the first cycle's facts
    told = (await cycle_input(time_env, cycle_run_id(inp.state.study_id, 2))).study
    assert told is not None and told.cycle == 2
    assert told.decision is not None and told.decision.pursue == "H2"
    assert told.previous[0].tasks[0].metrics == {"score": 0.5}
    # one cycle per execution: the study's first execution continued as new after its cycle
    first_run = await time_env.client.get_workflow_handle(
        inp.state.study_id, run_id=study.first_run).fetch_history()
    assert first_run.events[-1].event_type == \
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW


async def gate_waits(study: Study, handle: WorkflowHandle[Any, Any]) -> StudyProgress:
    return await study.until(handle, "the cycle gate", lambda p: p.waiting is not None)


@pytest.mark.parametrize(("decision", "cycles", "action", "by"), [
    ({"decision": "approve"}, 2, "stop", "rules"),
    ({"decision": "reject", "comment": "enough"}, 1, "stop", "ada"),
    ({"decision": "approve", "choice": "stop"}, 1, "stop", "ada"),
    ({"decision": "approve", "choice": "fix"}, 2, "stop", "rules"),
])
async def test_a_person_confirms_stops_or_overrides_at_the_cycle_gate(
        study: Study, decision: dict[str, Any], cycles: int, action: str, by: str) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    handle = await study.start(inp)
    waiting = await gate_waits(study, handle)
    assert waiting.waiting is not None and "pivot" in waiting.waiting.question
    await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "eve"})
    await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "ada",
                                    "choice": "pivot:H9"})
    await handle.signal("approve", {"gate": "cycle", "by": "ada", **decision})
    if cycles == 2:  # the second cycle's gate: confirm the rules' stop
        await gate_waits(study, handle)
        await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "ada"})
    result = await handle.result()
    assert result.cycles == cycles and result.decision is not None
    assert (result.decision.action, result.decision.by) == (action, by)
    summaries = study.reports.written[-1].state.summaries
    first = summaries[0].decision
    assert first is not None
    if by == "ada":
        assert first.by == "ada" and "ada" in result.reason
    if decision.get("choice") == "fix":
        assert first.action == "fix" and first.reason.startswith("ada chose fix")


async def test_refused_gate_decisions_say_why(study: Study) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    handle = await study.start(inp)
    await gate_waits(study, handle)
    for choice, expected in (("pivot:H9", "no hypothesis 'H9'"),
                             ("pivot:H1", "already refuted"),
                             ("launch", "is not one of iterate, fix, stop, pivot:H"),
                             ("stop:now", "is not one of")):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                "decide", {"gate": "cycle", "decision": "approve", "by": "ada",
                           "choice": choice}, result_type=dict)
        assert isinstance(caught.value.cause, ApplicationError)
        assert expected in str(caught.value.cause.message), choice
    record = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        "decide", {"gate": "cycle", "decision": "reject", "by": "ada"}, result_type=dict)
    assert record["status"] == "rejected" and len(record["refused"]) == 4
    assert (await handle.result()).cycles == 1


async def test_a_study_without_plans_waits_for_a_persons_plan_then_stops(
        study: Study) -> None:
    inp = study.input([], goal="does a larger step fit better?", **ACCEPT)
    handle = await study.start(inp)
    await study.until(handle, "the study to ask for a plan", lambda p: p.needs_plan)
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "supply_plan", {"plan_name": "x", "plan_sha256": "nope", "plan": {}},
            result_type=dict)
    assert isinstance(caught.value.cause, ApplicationError)
    assert caught.value.cause.type == "PlanRefused"
    supplied = cycle_plan(1, 0.5, "H1", H1, H2, by="bo")
    await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        "supply_plan", json.loads(supplied.model_dump_json()), result_type=dict)
    await study.until(handle, "the study to ask for its second plan",
                      lambda p: p.needs_plan and p.cycle == 1)
    await handle.signal("stop", {"by": "bo", "comment": "out of ideas"})
    result = await handle.result()
    assert (result.status, result.cycles) == ("completed", 1)
    assert result.reason == "stopped by bo (out of ideas)"


async def test_no_plan_in_time_ends_the_study_saying_so(study: Study) -> None:
    inp = study.input([], goal="anything?", gate={"timeout_s": 600})
    # waits out the gate's timeout: time skips while the result is awaited
    result = await study.env.client.execute_workflow(
        StudyWorkflow.run, inp, id=inp.state.study_id, task_queue=study.harness.queue)
    assert (result.status, result.cycles) == ("completed", 0)
    assert result.reason == "no plan came for cycle 1 within 600 s"


async def test_a_later_cycle_reuses_an_earlier_cycles_artifacts_without_running_it_again(
        study: Study) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2),
                       cycle_plan(2, 0.95, "H2", H2, reuse=["c1.fit1"])], **ACCEPT)
    result = await (await study.start(inp)).result()
    assert (result.status, result.cycles) == ("completed", 2), result.reason
    sandbox = study.harness.sandbox
    assert sorted(sandbox.ran) == ["fit1", "fit2"]  # fit1 ran once, in cycle 1
    assert sandbox.deps_seen["fit2"] == ["c1.fit1/out.txt"]


async def test_reusing_what_an_earlier_cycle_did_not_complete_ends_the_study_saying_why(
        study: Study) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2),
                       cycle_plan(2, 0.95, "H2", H2, reuse=["c1.nothing", "c7.fit1"])],
                      **ACCEPT)
    result = await (await study.start(inp)).result()
    assert (result.status, result.cycles) == ("failed", 1)
    assert "c1.nothing: task nothing of cycle 1 has no such task" in result.reason
    assert "c7.fit1: cycle 7 has not run in this study" in result.reason
    assert sorted(study.harness.sandbox.ran) == ["fit1"]


async def test_a_stop_answers_a_waiting_cycle_gate_and_only_its_approvers_may_stop(
        study: Study) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    handle = await study.start(inp)
    await gate_waits(study, handle)
    await handle.signal("stop", {"by": "eve"})
    await handle.signal("stop", {"by": "ada", "comment": "enough"})
    result = await handle.result()
    assert (result.status, result.cycles) == ("completed", 1)
    assert result.reason == "stopped by ada (enough)"
    assert result.decision is not None and result.decision.by == "ada"


@pytest.mark.parametrize(("on_timeout", "cycles", "reason"), [
    ("reject", 1, "the cycle gate timed out and its policy stops"),
    ("approve", 2, "acceptance criteria met: score = 0.95 (task fit2) >= 0.9"),
])
async def test_a_cycle_gate_nobody_answers_follows_its_policy(
        study: Study, on_timeout: str, cycles: int, reason: str) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      gate={"human": True, "timeout_s": 3600, "on_timeout": on_timeout},
                      **ACCEPT)
    # nobody decides: time skips while the result is awaited, past each gate's hour
    result = await study.env.client.execute_workflow(
        StudyWorkflow.run, inp, id=inp.state.study_id, task_queue=study.harness.queue)
    assert (result.cycles, result.reason) == (cycles, reason)
    gates = [s.decision.by for s in study.reports.written[-1].state.summaries if s.decision]
    assert gates[-1] == ("policy" if on_timeout == "reject" else "rules")


async def test_a_cancelled_study_cancels_its_cycle_and_still_writes_its_report(
        study: Study) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2)], **ACCEPT)
    inp = inp.model_copy(update={"policy": inp.policy.model_copy(update={
        "gates": inp.policy.gates.model_copy(update={"step": GateRule(human=True)})})})
    handle = await study.start(inp)
    cycle = study.env.client.get_workflow_handle(cycle_run_id(inp.state.study_id, 1))

    async def waiting_at_its_step_gate() -> bool:
        try:
            return (await cycle.query("progress", result_type=RunProgress)).tasks.get(
                "fit1") == "running"
        except RPCError:  # the cycle's run has not started yet
            return False

    await wait_for(waiting_at_its_step_gate, timeout=60, what="the cycle's task to start")
    await handle.cancel()
    with pytest.raises(WorkflowFailureError) as ended:
        await handle.result()
    assert isinstance(ended.value.cause, CancelledError)
    assert [w.status for w in study.reports.written] == ["cancelled"]
    assert (await cycle.describe()).status is not None
    with pytest.raises(WorkflowFailureError):  # the cycle was cancelled with the study
        await cycle.result()


async def test_the_root_hypothesis_gets_a_verdict_from_its_children_when_the_study_ends(
        study: Study, time_env: WorkflowEnvironment) -> None:
    root = {"id": "H0", "statement": "some step fits", "test": {
        "metric": "score", "op": ">", "threshold": 0.8}}
    child = {**H2, "parent": "H0"}
    inp = study.input([cycle_plan(1, 0.5, "H1", root, {**H1, "parent": "H0"}, child),
                       cycle_plan(2, 0.95, "H2", child)],
                      **ACCEPT)
    handle = await study.start(inp)
    result = await handle.result()
    assert (result.status, result.cycles) == ("completed", 2), result.reason
    running, final = study.reports.written
    assert running.state.tree.get("H0").status == "open"  # concluded only at the end
    concluded = final.state.tree.get("H0")
    assert (concluded.status, concluded.decided_in) == ("supported", 2)
    assert concluded.concluded == ("its own test never ran; from its children (H1 refuted, "
                                   "H2 supported): a child is supported")
    ended = await handle.query("progress", result_type=StudyProgress)
    assert ended.state.tree.get("H0").status == "supported"  # `assay hypotheses` reads it
    # each cycle's planner is told what the study stops on
    told = (await cycle_input(time_env, cycle_run_id(inp.state.study_id, 2))).study
    assert told is not None and told.policy.acceptance[0].describe() == "score >= 0.9"


def crashing_plan(n: int, hypothesis: str) -> CyclePlan:
    """Cycle ``n``'s plan: one task linked to ``hypothesis`` whose job always exits 1."""
    fit = {**task(f"fit{n}", behave="crash"), "hypothesis": hypothesis}
    plan = Plan.model_validate({"decisions": [fit], "hypotheses": [H1, H2]})
    sha = hashlib.sha256(plan.model_dump_json().encode()).hexdigest()
    return CyclePlan(plan_name=f"cycle-{n}", plan_sha256=sha, plan=plan)


async def test_fixes_that_keep_failing_escalate_to_a_pivot_then_the_study_stops(
        study: Study) -> None:
    plans = [crashing_plan(1, "H1"), crashing_plan(2, "H1"), crashing_plan(3, "H1"),
             crashing_plan(4, "H2")]
    handle = await study.start(study.input(plans, **ACCEPT))
    result = await handle.result()

    assert (result.status, result.cycles) == ("completed", 4), result.reason
    assert result.reason.startswith("no progress in the last 2 cycles (3 to 4)")
    state = study.reports.written[-1].state
    made = [s.decision for s in state.summaries]
    assert [(d.action, d.escalated) for d in made if d] == [
        ("fix", False), ("fix", False), ("pivot", True), ("stop", False)]
    assert state.tree.get("H1").abandoned_in == 3
    escalated = [e for e in study.harness.sink.events.values() if e.status == "escalated"]
    assert [(e.outputs["cycle"], e.outputs["abandon"], e.outputs["pursue"])
            for e in escalated] == [(3, ["H1"], "H2")]
