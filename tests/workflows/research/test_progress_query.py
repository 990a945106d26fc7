"""A run's progress query says what the run has spent so far and which hypotheses its plan
tests, so a study's status counts the running cycle in."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.harness import Harness, task
from workflows.contracts.plan import Plan
from workflows.research.workflow import ResearchWorkflow

H1 = {"id": "H1", "statement": "a fits", "test": {"metric": "score", "op": ">", "threshold": 0.5}}


async def test_the_progress_query_names_the_plans_hypotheses_and_the_spend(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task("a")], gates={"plan": {"human": True}})
    assert req.plan is not None
    plan = Plan.model_validate({**req.plan.model_dump(mode="json"), "hypotheses": [H1],
                                "decisions": [{**req.plan.decisions[0].model_dump(mode="json"),
                                               "hypothesis": "H1"}]})
    req = req.model_copy(update={"plan": plan})
    async with harness.worker():
        handle = await time_env.client.start_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                      task_queue=harness.queue)

        async def at_the_gate() -> bool:
            return (await handle.query(ResearchWorkflow.progress)).waiting is not None

        await wait_for(at_the_gate, timeout=20, what="the plan gate")
        progress = await handle.query(ResearchWorkflow.progress)
        assert progress.hypotheses == ["H1"] and progress.spent_usd == 0.0
        await handle.terminate("test over")
