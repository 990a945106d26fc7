"""Random runs with branches, gates and cancels end, each task and branch with a final status.

Real workflows on a time-skipping server of the test's own, with the fake sandbox: a random
plan of two to four tasks (random dependencies, or a diamond whose branched task has a
sibling its branches reuse; jobs that succeed or crash; branches the plan writes), random
human gates that time out (plan, step, the ``branch`` choice; their timeouts approve or
reject), a random selection, and perhaps a cancel once a task has started. A few examples
only (each is a whole run); the scheduling itself is tested over many plans by
``tests/workflows/branching/test_final_states.py``."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import start
from tests.workflows.harness import Harness, task
from tests.workflows.research.test_branch_siblings import result_of
from tests.workflows.research.test_branches import update
from workflows.contracts.branches import BranchTree
from workflows.contracts.results import RunProgress

RUN_ENDS = {"completed", "partial", "failed", "cancelled", "rejected"}
TASK_ENDS = {"completed", "failed", "failed_retry", "blocked", "cancelled", "deferred",
             "rejected", "timed_out"}


@pytest.fixture
async def served(own_time_env: WorkflowEnvironment, tmp_path: Path,
                 ) -> AsyncIterator[Harness]:
    """One worker on a server of this test's own, serving every example's run: what a
    cancelled run leaves behind is still served (the server skips time only when nothing
    waits for a worker), and leaves with the server."""
    harness = Harness(own_time_env, f"prop-{uuid.uuid4().hex[:10]}", tmp_path)
    async with harness.worker():
        yield harness


def gate() -> st.SearchStrategy[dict[str, Any]]:
    """A gate a person never answers: it times out, and its policy approves or rejects."""
    return st.fixed_dictionaries({
        "human": st.booleans(), "timeout_s": st.sampled_from([60.0, 3600.0]),
        "on_timeout": st.sampled_from(["approve", "approve", "reject"])})


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    """A random plan, policy and whether to cancel."""
    diamond = draw(st.booleans())  # t1 (branched) and t2 beside it, both before t3
    size = 4 if diamond else draw(st.integers(2, 4))
    decisions: list[dict[str, Any]] = []
    for i in range(size):
        earlier = [f"t{j}" for j in range(i)]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if i else []
        if diamond:
            deps = [[], ["t0"], ["t0"], ["t1", "t2"]][i]
        decision = task(f"t{i}", deps=deps, score=0.5,
                        behave=draw(st.sampled_from(["ok", "ok", "ok", "crash"])))
        decision["branches"] = [{"name": f"t{i}-b{k}", "set": {"args.score": 0.3 + 0.3 * k,
                                                                "args.behave": "ok"}}
                                for k in range(draw(st.integers(int(diamond and i == 1), 2)))]
        decisions.append(decision)
    policy = {"max_retries": 0, "max_parallel": draw(st.integers(1, 3)),
              "gates": {"plan": draw(gate()), "step": draw(gate()), "branch": draw(gate())},
              "branching": {"selection": draw(st.sampled_from(["best", "keep_all", "person"])),
                            "metric": {"name": "score", "direction": "maximize"}}}
    return {"plan": decisions, "policy": policy, "cancel": draw(st.booleans())}


async def cancel_once_started(handle: WorkflowHandle[Any, Any]) -> None:
    """Cancel the run once a task has started or a gate waits; nothing if it ended first."""
    async def moved() -> bool:
        progress = await handle.query("progress", result_type=RunProgress)
        return (progress.phase == "done" or progress.waiting is not None
                or any(s != "pending" for s in progress.tasks.values()))
    await wait_for(moved, timeout=60, what="the run to start a task")
    # a run already ending refuses: that it ends on its own is what is checked then
    with contextlib.suppress(WorkflowUpdateFailedError, RPCError):
        await update(handle, "steer_run", {"action": "cancel", "by": "ada"})


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=runs())
async def test_random_runs_with_branches_gates_and_cancels_end(
        served: Harness, case: dict[str, Any]) -> None:
    handle = await start(served, case["plan"], **case["policy"])
    if case["cancel"]:
        await cancel_once_started(handle)
    result = await result_of(handle)
    tree = await handle.query("branches", result_type=BranchTree)
    event(f"branches started: {bool(tree.branches)}")
    event(f"run ended {result.status}")
    assert result.status in RUN_ENDS, result.status
    statuses = {t.task_id: t.status for t in result.tasks}
    assert set(statuses) == {d["task_id"] for d in case["plan"]}
    assert set(statuses.values()) <= TASK_ENDS, statuses
    assert all(b.status != "running" for b in tree.branches), tree.branches
    assert all(s in TASK_ENDS for b in tree.branches for s in b.tasks.values()), tree.branches
    if tree.steering == ["ada: cancel"]:
        assert result.status == "cancelled", result.status_reason
