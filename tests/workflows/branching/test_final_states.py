"""Random plans with branches, person requests and cancels always reach a final state.

A pure model of how a run schedules (``workflows.research.tasks`` and ``lines``): a task starts
once its dependencies completed (at most ``limit`` at a time) and ends ``blocked`` once one did
not; the branches a plan writes start with their task, or wait (``unfinished``) until every
task they reuse has finished; a cancel ends every task and branch and drops what waits. The
branch requests go through the real ``plan_request``, at every step people send requests from
any task and checkpoint: each is planned or refused with a reason, never raises anything else,
and the model ends with every task, branch and request settled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workflows.branching.graph import upstream
from workflows.branching.requests import BranchRefusedError, RunView, plan_request, unfinished
from workflows.contracts.branches import BranchRequest
from workflows.contracts.plan import Plan, check_graph
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import TaskResult

FINAL = {"completed", "failed", "blocked", "cancelled"}
PHASES = ["planned", "execute", "verify"]
JOB = {"code": "print('fit')", "filename": "job.py", "args": {"score": 0.5},
       "expected_artifacts": ["out.txt"]}


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    """A random plan of 2-7 tasks (some with branches), how each task ends, and the run."""
    size = draw(st.integers(2, 7))
    decisions: list[dict[str, Any]] = []
    for i in range(size):
        earlier = [f"t{j}" for j in range(i)]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if i else []
        decision: dict[str, Any] = {"task_id": f"t{i}", "action": f"step {i}", "priority": "HIGH",
                                    "acceptance_criteria": ["done"], "dependencies": deps,
                                    "job": JOB}
        alternatives = draw(st.integers(0, 2))
        decision["branches"] = [{"name": f"t{i}-b{k}", "set": {"args.score": 0.1 * (k + 1)}}
                                for k in range(alternatives)]
        decisions.append(decision)
    return {"plan": Plan.model_validate({"decisions": decisions}),
            "ends": draw(st.lists(st.sampled_from(["completed", "completed", "failed"]),
                                  min_size=size, max_size=size)),
            "limit": draw(st.integers(1, 3)),
            "cancel_at": draw(st.none() | st.integers(0, 3 * size)),
            "seed": draw(st.integers(0, 2**32 - 1))}


@dataclass
class Model:
    """The run as the model has it."""

    plan: Plan
    order: list[str]
    results: dict[str, TaskResult] = field(default_factory=dict[str, TaskResult])
    running: set[str] = field(default_factory=set[str])
    branches: dict[str, str] = field(default_factory=dict[str, str])
    waiting: list[BranchRequest] = field(default_factory=list[BranchRequest])
    cancelling: bool = False
    refused: list[str] = field(default_factory=list[str])

    def view(self) -> RunView:
        return RunView(run_id="run", plan=self.plan, order=self.order, results=self.results,
                       names=set(self.branches))

    def request(self, req: BranchRequest) -> None:
        """Plan ``req`` as the run does: started, or refused with a reason."""
        try:
            planned = plan_request(req, self.view(), RunPolicy())
        except BranchRefusedError as err:
            assert str(err), "a refusal says why"
            self.refused.append(str(err))
            return
        for one in planned:
            reused = {r.task_id for r in one.reused}
            assert reused == set(upstream(self.plan, one.order)) <= set(self.results)
            self.branches[one.record.name] = "running"

    def release(self) -> None:
        for req in list(self.waiting):
            if self.cancelling:
                self.waiting.remove(req)
            elif not unfinished(req, self.view()):
                self.waiting.remove(req)
                self.request(req)

    def end(self, tid: str, status: str) -> None:
        self.running.discard(tid)
        self.results[tid] = TaskResult(task_id=tid, status=status,  # pyright: ignore[reportArgumentType]
                                       status_reason=status, job=self.plan.by_id()[tid].job)
        self.release()


def step(model: Model, pending: list[str], limit: int) -> None:
    """Block or start what can be, as the run's scheduling loop does."""
    decisions = model.plan.by_id()
    for tid in list(pending):
        deps = decisions[tid].dependencies
        if model.cancelling:
            pending.remove(tid)
            model.end(tid, "cancelled")
        elif any(d in model.results and model.results[d].status != "completed" for d in deps):
            pending.remove(tid)
            model.end(tid, "blocked")
        elif len(model.running) < limit and all(
                d in model.results and model.results[d].status == "completed" for d in deps):
            pending.remove(tid)
            model.running.add(tid)
            if decisions[tid].branches:
                req = BranchRequest(from_task=tid, branches=decisions[tid].branches, by="plan")
                if unfinished(req, model.view()):
                    model.waiting.append(req)
                else:
                    model.request(req)


def person_request(model: Model, rng: random.Random, n: int) -> None:
    """Someone asks for a branch from any task at any checkpoint, at any moment."""
    tid = rng.choice([*model.order, "nope"])
    model.request(BranchRequest.model_validate({
        "from_task": tid, "from_phase": rng.choice(PHASES), "by": "ada",
        "branches": [{"name": f"p{n}", "set": {"args.score": 0.9}}]}))


@settings(max_examples=300, deadline=None)
@given(plans())
def test_every_task_branch_and_request_reaches_a_final_state(case: dict[str, Any]) -> None:
    plan: Plan = case["plan"]
    model = Model(plan=plan, order=check_graph(plan))
    ends = dict(zip(model.order, case["ends"], strict=True))
    rng = random.Random(case["seed"])
    pending = list(model.order)
    for n in range(10 * len(model.order) + 10):
        if n == case["cancel_at"]:
            model.cancelling = True
            model.release()
        step(model, pending, case["limit"])
        if n < 2 * len(model.order):
            person_request(model, rng, n)
        live = sorted(model.running) + [b for b, s in model.branches.items() if s == "running"]
        if not live and not pending:
            break
        done = rng.choice(live)
        if done in model.running:
            model.end(done, "cancelled" if model.cancelling else ends[done])
        else:
            model.branches[done] = "cancelled" if model.cancelling else "completed"
    else:
        raise AssertionError(f"the run never ended: {model}")
    model.release()  # settle: what still waits starts, or is dropped when cancelled
    assert not model.waiting, "no branch waits once the tasks have ended"
    assert {t: r.status in FINAL for t, r in model.results.items()} == dict.fromkeys(
        model.order, True), "every task has a final status"
    started_late = [b for b, s in model.branches.items() if s == "running"]
    assert not started_late, f"branches started only at settle: {started_late}"
