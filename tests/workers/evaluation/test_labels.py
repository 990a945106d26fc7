"""A formatted answer scored against a benchmark's labels; a missing field fails with its cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.workers.evaluation.test_suite import write_suite
from workers.evaluation.labels import score_labels
from workers.evaluation.suite import SuiteError, load_suite

FORMAT = ('@mean_age[mean_age] @city[city], where "mean_age" is a number rounded to two '
          'decimal places')
LABELS = {"mean_age": "34.21", "city": "Oslo"}


def document(formatted: dict[str, Any] | None) -> dict[str, Any]:
    return {"answer": {"answer": "…", "formatted": formatted}}


def test_every_label_must_match_numbers_within_the_format_s_rounding() -> None:
    held = score_labels(document({"values": {"mean_age": "34.214", "city": "oslo"}}),
                        FORMAT, LABELS)
    assert (len(held.held), held.missed) == (2, [])
    wrong = score_labels(document({"values": {"mean_age": "34.2", "city": "Oslo"},
                                   "problems": ["@city: cites no verified metric"]}),
                         FORMAT, LABELS)
    assert wrong.missed == ["@mean_age[34.2] (want 34.21)"]
    assert wrong.problems == ["@city: cites no verified metric"]


@pytest.mark.parametrize(("formatted", "reason"), [
    (None, "answer format: the run's answer has no formatted field"),
    ({"text": "about 34", "values": {}}, "answer format: no @name[value] field can be read"),
    ({"values": {"mean_age": "34.21"}}, "answer format: @city missing (want Oslo)")])
def test_a_missing_or_unparsable_field_is_a_failure_with_its_reason(
        formatted: dict[str, Any] | None, reason: str) -> None:
    assert score_labels(document(formatted), FORMAT, LABELS).missed[0].startswith(reason)
    assert score_labels({"answer": None}, FORMAT, LABELS).missed


def test_a_suite_task_with_a_format_needs_a_label_for_each_field(tmp_path: Path) -> None:
    goal = {"id": "g", "level": 1, "goal": "How old?", "answer_format": FORMAT,
            "labels": LABELS}
    suite, _ = load_suite(write_suite(tmp_path, [goal]))
    assert suite.tasks[0].labels == LABELS
    with pytest.raises(SuiteError, match="do not match the format's fields"):
        load_suite(write_suite(tmp_path, [{**goal, "labels": {"mean_age": "1"}}]))
    with pytest.raises(SuiteError, match="names no field"):
        load_suite(write_suite(tmp_path, [{**goal, "answer_format": "a number"}]))
