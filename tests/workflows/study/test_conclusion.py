"""A study's end concludes its untested hypotheses from their children; a hypothesis whose own
test ran keeps that test's verdict (docs/guides/studies.md)."""

from __future__ import annotations

from tests.workflows.study.factories import hypothesis, tree
from workflows.contracts.plan import Plan
from workflows.study.conclusion import concluded

EVIDENCE = [{"task_id": "fit", "metric": "r2", "value": 0.49, "cycle": 2}]
OWN = [{"task_id": "repeat", "metric": "cv_auc", "value": 0.7507, "cycle": 3,
        "ci": [0.7379, 0.7622], "level": 0.95}]
GAIN = [{"task_id": "boosting", "metric": "cv_auc_gain", "value": 0.0065, "cycle": 2,
         "ci": [0.0001, 0.0128], "level": 0.95}]


def test_a_supported_child_supports_its_open_parent_with_its_evidence() -> None:
    got = concluded(tree(hypothesis("H1"),
                         hypothesis("H1a", "H1", status="refuted", decided_in=1),
                         hypothesis("H1b", "H1", status="supported", decided_in=2,
                                    evidence=EVIDENCE)), 3)
    root = got.get("H1")
    assert (root.status, root.decided_in) == ("supported", 3)
    assert root.concluded == "its own test never ran; from its children (H1a refuted, " \
                             "H1b supported): a child is supported"
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
    untested = concluded(tree(hypothesis("H1"), hypothesis("H1a", "H1", status="refuted",
                                                            decided_in=1),
                              hypothesis("H1b", "H1", status="inconclusive")), 2).get("H1")
    assert (untested.status, untested.concluded) == (
        "inconclusive", "its own test never ran; from its children (H1a refuted, "
                        "H1b inconclusive): no child is supported and not every child is refuted")


def test_a_parent_its_own_test_left_inconclusive_stays_so_though_a_child_is_supported() -> None:
    # the hand study: H1 "a model reaches cv_auc >= 0.75" measured 0.7507 [0.7379, 0.7622];
    # its child H4 "boosted trees gain over the logistic model" was supported
    study = tree(hypothesis("H1", metric="cv_auc", threshold=0.75, status="inconclusive",
                            evidence=OWN),
                 hypothesis("H4", "H1", metric="cv_auc_gain", op=">", threshold=0,
                            status="supported", decided_in=2, evidence=GAIN))
    got = concluded(study, 3)
    assert got == study  # nothing changed: its verdict, its evidence, no account of children
    root = got.get("H1")
    assert (root.status, root.decided_in, root.concluded) == ("inconclusive", None, "")
    assert [(e.task_id, e.value) for e in root.evidence] == [("repeat", 0.7507)]


def test_a_parent_its_own_test_left_inconclusive_is_not_refuted_by_its_children() -> None:
    study = tree(hypothesis("H1", status="inconclusive", evidence=EVIDENCE),
                 hypothesis("H1a", "H1", status="refuted", decided_in=1),
                 hypothesis("H1b", "H1", status="refuted", decided_in=2))
    assert concluded(study, 2).get("H1").status == "inconclusive"


def test_a_decided_parent_keeps_its_own_verdict_whatever_its_children_say() -> None:
    refuted = tree(hypothesis("H1", status="refuted", decided_in=1),
                   hypothesis("H1a", "H1", status="supported", decided_in=2))
    supported = tree(hypothesis("H1", status="supported", decided_in=1),
                     hypothesis("H1a", "H1", status="refuted", decided_in=2))
    assert concluded(refuted, 2) == refuted and concluded(supported, 2) == supported


def test_studies_begun_before_the_patch_conclude_a_tested_parent_from_its_children() -> None:
    study = tree(hypothesis("H1", status="inconclusive", evidence=OWN),
                 hypothesis("H4", "H1", status="supported", decided_in=2, evidence=GAIN))
    old = concluded(study, 3, own_tests=False).get("H1")
    assert (old.status, old.decided_in) == ("supported", 3)
    assert old.concluded == "from its children (H4 supported): a child is supported"


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
