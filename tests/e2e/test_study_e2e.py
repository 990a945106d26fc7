"""The example study end to end on the dev server, with every pool and the real sandbox:
cycle 1 refutes a straight line, the rules pivot to the parabola, cycle 2 fits it to cycle
1's data (reused, not drawn again), supports it and meets the acceptance criterion, and the
study's report tells that story with its chart."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import ROOT, isolated_settings, pools_serving, store_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workflows.constants import PARENT_KEY, study_workflow_id
from workflows.contracts.cycles import CyclePlan, StudyInput
from workflows.contracts.results import RunReport
from workflows.contracts.study import StudyPolicy, StudyState
from workflows.study.workflow import StudyWorkflow

pytestmark = pytest.mark.integration
FOLDER = ROOT / "examples" / "study"


@pytest.mark.timeout(300)
async def test_the_example_study_pivots_and_stops_when_its_criterion_holds(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    queues = queues_from(settings)
    plans: list[CyclePlan] = []
    for name in ("plan.json", "cycle-2.json"):
        req = load_plan(FOLDER / name, max_bytes=settings.max_plan_bytes, queues=queues,
                        store=store_of(settings))
        assert req.plan is not None
        plans.append(CyclePlan(plan_name=req.plan_name, plan_sha256=req.plan_sha256,
                               plan=req.plan))
    policy = StudyPolicy.model_validate({
        "max_cycles": 3, "key_metric": {"name": "r2", "direction": "maximize"},
        "acceptance": [{"metric": "r2", "op": ">=", "threshold": 0.95}]})
    study_id = study_workflow_id("curve", plans[0].plan_sha256)
    inp = StudyInput(state=StudyState(study_id=study_id, policy=policy,
                                      first_plan=f"{plans[0].plan_name}@{plans[0].plan_sha256}"),
                     plans=plans, policy=req.policy, queues=queues)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        result = await dev_env.client.execute_workflow(
            StudyWorkflow.run, inp, id=study_id, task_queue=queues.orchestration)
        cycles = [w.id async for w in dev_env.client.list_workflows(
            f'{PARENT_KEY.name}="{study_id}"')]

    assert (result.status, result.cycles) == ("completed", 2), result.reason
    assert result.reason == "acceptance criteria met: r2 = 0.9893 (task fit) >= 0.95"
    assert sorted(cycles) == [f"{study_id}.cycle-1", f"{study_id}.cycle-2"]
    assert result.report is not None
    markdown = Path(result.report.summary_md).read_text(encoding="utf-8")
    assert "refuted" in markdown and "supported" in markdown and "pivot" in markdown
    assert "0.1939" in markdown and "0.9893" in markdown
    # cycle 2 read cycle 1's verified data by reference: its run had no data task at all
    second = RunReport.model_validate_json(Path(StudyState.model_validate_json(Path(
        result.report.results_json).read_text()).summaries[1].results_json).read_text())
    assert [t.task_id for t in second.tasks] == ["fit"] and second.tasks[0].metrics["rows"] == 200
    figure = Path(result.report.summary_md).parent / "figures" / "metrics.png"
    assert figure.read_bytes().startswith(b"\x89PNG")
