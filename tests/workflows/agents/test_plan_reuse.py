"""A study's planner may reuse earlier cycles' completed tasks: it is told which, and how;
its references become ``Decision.reuse`` or go back as problems; a run outside a study is
offered the schema it always was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from activities.agents.studies import study_section
from tests.workflows.study.factories import outcome, summary
from workflows.agents.planning import plan_from_draft
from workflows.contracts.plan import PlanError
from workflows.contracts.roles import PlanDraftOutput, StudyPlanDraftOutput
from workflows.contracts.study import CycleSummary, StudyContext


def kept(s: CycleSummary) -> CycleSummary:
    """``s`` as the study keeps it once its report is written."""
    return s.model_copy(update={"results_json": f"/reports/cycle-{s.cycle}/results.json"})


def context() -> StudyContext:
    data = outcome("data").model_copy(update={"action": "Write data.csv: 200 rows of x, y."})
    return StudyContext(study_id="s", cycle=3, previous=[
        kept(summary(1, data, outcome("fit", hypothesis="H1"))),
        kept(summary(2, outcome("fit2"), outcome("broken", "failed")))])


def draft(**task: Any) -> PlanDraftOutput:
    answer = StudyPlanDraftOutput.model_validate({"tasks": [
        {"task_id": "fit", "action": "fit", "acceptance_criteria": ["c"], **task}]})
    return PlanDraftOutput.model_validate(answer.model_dump())


def test_the_completed_tasks_of_the_cycles_shown_are_reusable() -> None:
    ctx = context()
    assert sorted(ctx.reusable()) == ["c1.data", "c1.fit", "c2.fit2"]
    unkept = ctx.model_copy(update={"previous": [summary(1, outcome("data"))]})
    assert unkept.reusable() == {}  # no report kept: nothing to resolve a reference from


def test_the_study_section_offers_them_and_says_how_to_read_them() -> None:
    text = study_section(context())
    offered = text[text.index("### Earlier tasks you may reuse"):text.index("### Carried")]
    assert "- c1.data: Write data.csv: 200 rows of x, y." in offered
    assert "- c2.fit2" in offered and "broken" not in offered
    assert "`deps/c1.data/<file>`" in text and "`reuse`" in text


def test_references_become_the_decisions_reuse() -> None:
    plan = plan_from_draft(draft(reuse=["c1.data"]), [], name="cycle-3",
                           reusable=context().reusable())
    assert plan.decisions[0].reuse == ["c1.data"]
    assert '"reuse": ["c1.data"]' in json.dumps(plan.model_dump(mode="json"))


@pytest.mark.parametrize("ref", ["c2.broken", "c9.data", "data"])
def test_a_task_not_offered_goes_back_as_a_problem(ref: str) -> None:
    with pytest.raises(PlanError, match=rf"task fit: reuse \['{ref}'\] are not completed "
                                         r"tasks of an earlier cycle \(those that may be "
                                         r"reused: c1.data, c1.fit, c2.fit2\)"):
        plan_from_draft(draft(reuse=[ref]), [], name="cycle-3", reusable=context().reusable())


def test_outside_a_study_nothing_is_reusable_and_the_schema_is_unchanged() -> None:
    with pytest.raises(PlanError, match="those that may be reused: none in this cycle"):
        plan_from_draft(draft(reuse=["c1.data"]), [], name="goal")
    assert "reuse" not in json.dumps(PlanDraftOutput.model_json_schema())
    assert "reuse" in json.dumps(StudyPlanDraftOutput.model_json_schema())
    plain = plan_from_draft(draft(), [], name="goal")
    assert "reuse" not in json.dumps(plain.model_dump(mode="json"))
    assert "reuse" not in json.dumps(draft().model_dump(mode="json"))
