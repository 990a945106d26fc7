"""A drafted plan's hypotheses and task links become the plan's, or go back as problems."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.workflows.study.factories import hypothesis, tree
from workflows.agents.planning import plan_from_draft
from workflows.contracts.hypotheses import HypothesisTest
from workflows.contracts.plan import PlanError
from workflows.contracts.roles import (
    PlanDraftOutput,
    PlannedHypothesis,
    PlannedTask,
    StudyPlanDraftOutput,
)
from workflows.contracts.study import HypothesisTree


def planned(tid: str, link: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"task_id": tid, "action": f"do {tid}", "acceptance_criteria": ["c"],
            "hypothesis": link, **fields}


def proposed(hid: str, parent: str | None = None, **test: Any) -> dict[str, Any]:
    return {"id": hid, "parent": parent, "statement": f"claim {hid}",
            "test": {"metric": "auc", "op": ">=", "threshold": 0.8, **test}}


def draft(tasks: list[dict[str, Any]], hypotheses: list[dict[str, Any]]) -> PlanDraftOutput:
    """As the planner's answer reaches the workflow: a plain draft with the study's fields."""
    answer = StudyPlanDraftOutput.model_validate({"tasks": tasks, "hypotheses": hypotheses})
    return PlanDraftOutput.model_validate(answer.model_dump())


def test_proposals_and_links_become_the_plans_hypotheses() -> None:
    study = tree(hypothesis("H1"), hypothesis("H2", "H1", status="refuted", decided_in=1,
                                              evidence=[{"task_id": "a", "metric": "auc",
                                                         "value": 0.6, "cycle": 1}]))
    plan = plan_from_draft(draft([planned("fit", "H3"), planned("again", "H2"),
                                  planned("plain")],
                                 [proposed("H3", "H1", task_id="fit")]),
                           [], name="cycle-2", tree=study)
    by_id = plan.by_id()
    assert (by_id["fit"].hypothesis, by_id["again"].hypothesis, by_id["plain"].hypothesis) \
        == ("H3", "H2", None)
    h3, h2 = plan.hypotheses
    assert (h3.id, h3.parent, h3.statement, h3.status) == ("H3", "H1", "claim H3", "open")
    assert h3.test == HypothesisTest(metric="auc", op=">=", threshold=0.8, task_id="fit")
    # a tree hypothesis linked by id comes as the tree has it, but open and without evidence
    assert (h2.id, h2.parent, h2.status, h2.evidence, h2.decided_in) == (
        "H2", "H1", "open", [], None)


def test_a_draft_without_hypotheses_makes_the_plan_it_always_made() -> None:
    plain = PlanDraftOutput(tasks=[PlannedTask.model_validate(
        {"task_id": "a", "action": "do a", "acceptance_criteria": ["c"]})])
    plan = plan_from_draft(plain, [], name="goal")
    assert plan.hypotheses == [] and plan.decisions[0].hypothesis is None
    assert "hypothes" not in plan.model_dump_json()  # the plan's digest is as before
    assert "hypothes" not in plain.model_dump_json()


@pytest.mark.parametrize(("tasks", "hypotheses", "study", "problem"), [
    ([planned("a", "H9")], [], None, "task a: unknown hypothesis 'H9'"),
    ([planned("a", "H9")], [proposed("H1")], tree(hypothesis("H2")),
     "link one of: H1, H2"),
    ([planned("a", "H1")], [proposed("H1", "H7")], None, "unknown parent 'H7'"),
    ([planned("a", "H1")], [proposed("H1", task_id="zz")], None,
     "its test names task 'zz', which is not in the plan"),
    ([planned("a", "H1")], [proposed("H1"), proposed("H1")], None, "proposed twice"),
    ([planned("a", "H1")], [proposed("H1", threshold=0.9)], tree(hypothesis("H1")),
     "the study already has H1 as 'claim H1' (auc >= 0.8)"),
    ([planned("a", "H1")], [proposed("H1", "H2"), proposed("H2", "H1")], None,
     "hypothesis parents form a cycle"),
])
def test_bad_hypotheses_or_links_are_refused_naming_the_problem(
        tasks: list[dict[str, Any]], hypotheses: list[dict[str, Any]],
        study: HypothesisTree | None, problem: str) -> None:
    with pytest.raises(PlanError) as err:
        plan_from_draft(draft(tasks, hypotheses), [], name="g", tree=study)
    assert problem in str(err.value)


def test_the_planner_cannot_answer_a_decided_hypothesis() -> None:
    """A proposal has no status or evidence to give: verdicts come from verified metrics."""
    answer = PlannedHypothesis.model_validate({**proposed("H1"), "status": "supported",
                                               "evidence": [{"value": 1}]})
    plan = plan_from_draft(draft([planned("a", "H1")], [answer.model_dump()]), [], name="g")
    assert plan.hypotheses[0].status == "open" and plan.hypotheses[0].evidence == []


def test_the_study_schema_tells_a_hypothesis_test_apart_from_a_task_check() -> None:
    schema = StudyPlanDraftOutput.model_json_schema()["$defs"]
    task = schema["StudyPlannedTask"]["properties"]
    assert "never the test of its hypothesis" in task["checks"]["description"]
    assert "REPORTS its test's metric" in task["hypothesis"]["description"]
    test = schema["PlannedHypothesis"]["properties"]["test"]
    assert "not a check of any task" in test["description"]
    plain = json.dumps(PlanDraftOutput.model_json_schema())
    assert "never the test" not in plain and "REPORTS" not in plain
