"""A study on a known effect near its threshold ends "not established", never "met".

Ridge's R² gain over least squares is 0.01145 (known: the job draws it so), and the study
accepts ``r2_gain >= 0.01``. On its point estimate that holds; its 95 % interval,
[-0.008743, 0.03164], includes 0.01. The job reports the gain with its interval, so on the
dev server with every pool and the real sandbox: cycle 1's hypothesis is inconclusive and
the rules ask for more evidence; cycle 2, at the cycle limit, stops with acceptance not
established, and the study's report says so beside the interval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import ROOT, isolated_settings, pools_serving, store_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workflows.constants import study_workflow_id
from workflows.contracts.cycles import CyclePlan, StudyInput
from workflows.contracts.study import StudyPolicy, StudyState
from workflows.study.workflow import StudyWorkflow

pytestmark = pytest.mark.integration
PLAN = ROOT / "tests" / "data" / "intervals" / "plan.json"
STRADDLES = "the 95 % interval [-0.008743, 0.03164] of r2_gain (task compare) includes 0.01"


@pytest.mark.timeout(300)
async def test_a_gain_whose_interval_includes_the_threshold_is_not_established(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    queues = queues_from(settings)
    req = load_plan(PLAN, max_bytes=settings.max_plan_bytes, queues=queues,
                    store=store_of(settings))
    assert req.plan is not None
    plan = CyclePlan(plan_name=req.plan_name, plan_sha256=req.plan_sha256, plan=req.plan)
    policy = StudyPolicy.model_validate({
        "max_cycles": 2, "key_metric": {"name": "r2_gain", "direction": "maximize"},
        "acceptance": [{"metric": "r2_gain", "op": ">=", "threshold": 0.01}]})
    study_id = study_workflow_id("ridge", plan.plan_sha256)
    inp = StudyInput(state=StudyState(study_id=study_id, policy=policy,
                                      first_plan=f"{plan.plan_name}@{plan.plan_sha256}"),
                     plans=[plan, plan], policy=req.policy, queues=queues)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        result = await dev_env.client.execute_workflow(
            StudyWorkflow.run, inp, id=study_id, task_queue=queues.orchestration)

    assert (result.status, result.cycles) == ("completed", 2), result.reason
    assert result.reason == ("cycle limit reached: 2 of 2 cycles run; acceptance not "
                             f"established: r2_gain >= 0.01: {STRADDLES}")
    assert result.report is not None
    state = StudyState.model_validate_json(Path(result.report.results_json).read_text())
    first = state.summaries[0].decision
    assert first is not None and first.action == "fix"
    assert first.reason.endswith(f"acceptance not established: r2_gain >= 0.01: {STRADDLES}")
    assert [h.status for h in state.tree.hypotheses] == ["inconclusive"]
    markdown = Path(result.report.summary_md).read_text(encoding="utf-8")
    assert "acceptance criteria met" not in markdown
    assert ("| r2\\_gain \\>= 0.01 | inconclusive | 0.01145 \\[-0.008743, 0.03164\\] 95 % "
            "(task compare) |") in markdown
    assert "- Acceptance criterion r2\\_gain \\>= 0.01 is written on a point estimate" \
        in markdown
