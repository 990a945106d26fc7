"""A study's end concludes its undecided hypotheses from their children (docs/guides/studies.md)."""

from __future__ import annotations

from tests.workflows.study.factories import hypothesis, tree
from workflows.contracts.plan import Plan
from workflows.study.conclusion import concluded

EVIDENCE = [{"task_id": "fit", "metric": "r2", "value": 0.49, "cycle": 2}]


def test_a_supported_child_supports_its_open_parent_with_its_evidence() -> None:
    got = concluded(tree(hypothesis("H1"),
                         hypothesis("H1a", "H1", status="refuted", decided_in=1),
                         hypothesis("H1b", "H1", status="supported", decided_in=2,
                                    evidence=EVIDENCE)), 3)
    root = got.get("H1")
    assert (root.status, root.decided_in) == ("supported", 3)
    assert root.concluded == "from its children (H1a refuted, H1b supported): a child is " \
                             "supported"
    assert [(e.task_id, e.value) for e in root.evidence] == [("fit", 0.49)]
    assert got.get("H1a").concluded == "" and got.get("H1b").status == "supported"


def test_every_child_refuted_refutes_and_an_open_child_leaves_it_inconclusive() -> None:
    refuted = concluded(tree(hypothesis("H1"),
                             hypothesis("H1a", "H1", status="refuted", decided_in=1)), 2)
    assert refuted.get("H1").status == "refuted"
    mixed = concluded(tree(hypothesis("H1", status="inconclusive", decided_in=1),
                           hypothesis("H1a", "H1", status="refuted", decided_in=1),
                           hypothesis("H1b", "H1")), 2)
    assert mixed.get("H1").status == "inconclusive"
    assert mixed.get("H1b").status == "open"  # a childless non-root keeps its status


def test_children_are_concluded_before_their_parents() -> None:
    got = concluded(tree(hypothesis("H1"), hypothesis("H1a", "H1"),
                         hypothesis("H1a1", "H1a", status="supported", decided_in=1)), 1)
    assert got.get("H1a").status == "supported" and got.get("H1").status == "supported"


def test_a_root_decided_by_its_own_test_or_never_tested() -> None:
    own = tree(hypothesis("H1", status="refuted", decided_in=1),
               hypothesis("H1a", "H1", status="supported", decided_in=1))
    assert concluded(own, 2) == own
    untested = concluded(tree(hypothesis("H1")), 1).get("H1")
    assert (untested.status, untested.concluded) == (
        "inconclusive", "the study ended before its test was decided")
    assert concluded(tree(hypothesis("H1")), 0).get("H1").status == "open"


def test_a_plan_s_hypotheses_dump_as_before() -> None:
    plan = Plan.model_validate({"decisions": [{
        "task_id": "a", "priority": "HIGH", "action": "a", "acceptance_criteria": ["x"],
        "hypothesis": "H1"}],
        "hypotheses": [{"id": "H1", "statement": "s", "test": {
            "metric": "m", "op": ">", "threshold": 1}}]})
    assert "concluded" not in plan.model_dump_json()
