"""The study's contracts: hypothesis trees, tests, decisions, policies; plans proposing them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from tests.workflows.study.factories import decision, hypothesis, plan, tree
from workflows.constants import digest
from workflows.contracts.hypotheses import MAX_HYPOTHESES, HypothesisTest, HypothesisTree
from workflows.contracts.plan import Plan
from workflows.contracts.study import CycleDecision, StudyPolicy, StudyState

PLAN: dict[str, Any] = {"meeting_id": "m1", "metric": {"name": "auc"}, "decisions": [
    {"task_id": 1, "priority": "HIGH", "action": "fit", "acceptance_criteria": ["auc reported"],
     "job": {"code": "print(1)", "expected_metrics": ["auc"]},
     "checks": [{"metric": "auc", "op": ">=", "value": 0.5}]},
    {"task_id": 2, "priority": "LOW", "action": "plot", "acceptance_criteria": ["a plot"],
     "dependencies": [1]}]}
PLAN_DIGEST = "6048d3009b4f8c41371a8b0113efe19f3391d01ab7026580e2d032164ada64cd"
"""This plan's digest before plans could carry hypotheses."""


def test_a_plan_without_hypotheses_keeps_its_digest() -> None:
    parsed = Plan.model_validate(PLAN)
    text = parsed.model_dump_json(exclude_none=True)
    assert "hypothes" not in text
    assert digest(text.encode()) == PLAN_DIGEST


def test_a_plan_with_hypotheses_round_trips() -> None:
    proposals = [hypothesis("H1").model_dump(), hypothesis("H1a", parent="H1").model_dump()]
    written = plan([decision("1", hypothesis="H1a"), decision("2")], hypotheses=proposals)
    again = Plan.model_validate(json.loads(written.model_dump_json()))
    assert again == written
    assert [h.id for h in again.hypotheses] == ["H1", "H1a"]
    assert [d.hypothesis for d in again.decisions] == ["H1a", None]
    assert "hypothesis" not in again.model_dump(mode="json")["decisions"][1]


@pytest.mark.parametrize(("fields", "message"), [
    ({"decisions": [decision("1", hypothesis="H9")], "hypotheses": []},
     "task 1: unknown hypothesis 'H9' (the plan proposes none)"),
    ({"decisions": [decision("1")],
      "hypotheses": [hypothesis("H1", status="supported").model_dump()]},
     "hypothesis H1: a plan proposes it open"),
    ({"decisions": [decision("1")],
      "hypotheses": [hypothesis("H1").model_dump(), hypothesis("H1").model_dump()]},
     "hypothesis H1: duplicate id"),
])
def test_a_plan_refuses_bad_hypotheses(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        Plan.model_validate(fields)


def test_a_plans_proposal_may_name_a_parent_from_the_studys_tree() -> None:
    written = plan([decision("1")], hypotheses=[hypothesis("H2", parent="H1").model_dump()])
    assert written.hypotheses[0].parent == "H1"


@pytest.mark.parametrize(("items", "message"), [
    ([hypothesis("H1"), hypothesis("H1")], "hypothesis H1: duplicate id"),
    ([hypothesis("H1", parent="H0")], "hypothesis H1: unknown parent 'H0'"),
    ([hypothesis("A", parent="C"), hypothesis("B", parent="A"), hypothesis("C", parent="B")],
     "hypothesis parents form a cycle: A -> C -> B -> A"),
    ([hypothesis(f"H{i}") for i in range(MAX_HYPOTHESES + 1)],
     f"{MAX_HYPOTHESES + 1} hypotheses, more than the {MAX_HYPOTHESES} allowed"),
])
def test_a_tree_refuses_what_is_not_a_tree(items: list[Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        HypothesisTree(hypotheses=items)


def test_a_hypothesis_is_not_its_own_parent_and_its_id_is_a_task_like_id() -> None:
    with pytest.raises(ValidationError, match="H1: is its own parent"):
        hypothesis("H1", parent="H1")
    with pytest.raises(ValidationError, match="id"):
        hypothesis("../x")


def test_tree_helpers() -> None:
    t = tree(hypothesis("H1"), hypothesis("H2", status="refuted", decided_in=1),
             hypothesis("H1a", parent="H1"), hypothesis("H1b", parent="H1",
                                                        status="inconclusive"))
    assert [h.id for h in t.children("H1")] == ["H1a", "H1b"]
    assert [h.id for h in t.children(None)] == ["H1", "H2"]
    assert [h.id for h in t.siblings("H1a")] == ["H1b"]
    assert [h.id for h in t.siblings("H2")] == ["H1"]
    assert [h.id for h in t.open()] == ["H1", "H1a", "H1b"]
    with pytest.raises(KeyError, match="no hypothesis 'H7'"):
        t.get("H7")


@pytest.mark.parametrize(("fields", "message"), [
    ({"metric": "auc", "op": ">="}, 'needs "metric", "op" and "threshold"'),
    ({"metric": "auc", "op": ">=", "threshold": 1, "check": "auc", "task_id": "1"}, "not both"),
    ({"check": "auc"}, 'needs the "task_id"'),
    ({"metric": "auc", "op": "~", "threshold": 1}, "op"),
])
def test_a_test_is_a_metric_test_or_a_check_reference(fields: dict[str, Any],
                                                       message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        HypothesisTest.model_validate(fields)


def test_a_pivot_names_its_sibling_and_only_a_pivot_does() -> None:
    with pytest.raises(ValidationError, match="pursue"):
        CycleDecision(action="pivot", reason="H1 refuted")
    with pytest.raises(ValidationError, match="pursue"):
        CycleDecision(action="iterate", reason="go on", pursue="H2")
    assert CycleDecision(action="pivot", reason="r", pursue="H2", by="ada").by == "ada"


def test_policy_and_state_refuse_what_they_cannot_use() -> None:
    assert StudyPolicy().no_progress_cycles == 2
    with pytest.raises(ValidationError, match="write it as a metric test"):
        StudyPolicy.model_validate({"acceptance": [{"check": "auc", "task_id": "1"}]})
    with pytest.raises(ValidationError, match="max_cycles"):
        StudyPolicy(max_cycles=0)
    with pytest.raises(ValidationError, match='"goal" or a "first_plan"'):
        StudyState(study_id="s")


def test_a_verdict_line_says_the_verdict_once_with_its_evidence() -> None:
    from workflows.contracts.hypotheses import Verdict

    judged = Verdict(hypothesis="H1", status="inconclusive", reason=(
        "H1 inconclusive: the 95 % interval [0.7295, 0.7541] of cv_auc (task cv) includes 0.75"))
    assert judged.line() == judged.reason
    assert Verdict(hypothesis="H2", status="refuted", reason="auc = 0.7 (task 1)").line() == \
        "H2 refuted: auc = 0.7 (task 1)"
    assert Verdict(hypothesis="H3", status="supported", reason="").line() == \
        "H3 supported (no reason given)"
