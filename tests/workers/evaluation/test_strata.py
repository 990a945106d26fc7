"""Scores per level and concept, and each failed run put down to one of six causes."""

from __future__ import annotations

from typing import Any

import pytest

from workers.evaluation.causes import failure_cause
from workers.evaluation.report import markdown, scores
from workers.evaluation.runner import Sample
from workers.evaluation.strata import cause_rows, strata_rows
from workers.evaluation.suite import Suite, SuiteTask


def run(outcome: str = "completed", reason: str = "", **task: Any) -> dict[str, Any]:
    done = {"task_id": "a", "status": "completed", "status_reason": ""}
    return {"status": outcome, "status_reason": reason, "tasks": [{**done, **task}]}


@pytest.mark.parametrize(("error", "missed", "document", "cause"), [
    ("no result within 900 s; cancelled", [], None, "budget"),
    ("", [], run("failed", "BudgetExhausted: the run's model budget is spent"), "budget"),
    ("worker unreachable", [], None, "environment"),
    ("", [], {"status": "deferred", "status_reason": "no model", "tasks": []}, "planning"),
    ("", [], run("failed", status="failed", execution={"outcome": "nonzero_exit",
                                                        "stderr_tail": "KeyError: 'x'"}),
     "code"),
    ("", [], run("failed", status="failed", execution={
        "outcome": "nonzero_exit", "stderr_tail": "ModuleNotFoundError: No module named 'q'"}),
     "environment"),
    ("", [], run("failed", status="failed", execution={"outcome": "succeeded"}),
     "verification"),
    ("", ["answer format: the run's answer has no formatted field"], run(), "answer format"),
    ("", ["@mean[3.1] (want 3.2)"], run(), "verification"),
])
def test_a_failed_run_is_put_down_to_its_cause(error: str, missed: list[str],
                                              document: Any, cause: str) -> None:
    assert failure_cause(passed=False, error=error, missed=missed, document=document) == cause
    assert failure_cause(passed=True, error="", missed=[], document=document) == ""


SUITE = Suite(name="s", tasks=[
    SuiteTask(id="a", level=1, goal="g", hypothesis="h", concepts=["means", "tables"]),
    SuiteTask(id="b", level=2, goal="g", hypothesis="h", topic="tables"),
    SuiteTask(id="c", level=2, goal="g", hypothesis="h")])


def sample(task: str, level: int, passed: bool, cause: str = "", **extra: Any) -> Sample:
    return Sample(task=task, level=level, configuration="full", repeat=1, passed=passed,
                  cause=cause, calls=4, tokens=1000, cost_usd=0.01, seconds=10.0, **extra)


SAMPLES = [sample("a", 1, True), sample("b", 2, False, "code"),
           sample("c", 2, False, "answer format")]


def test_scores_come_per_level_and_per_concept_with_tokens() -> None:
    (config,) = scores(SUITE, SAMPLES)
    rows = {r[0]: r[1:] for r in strata_rows(SUITE, config)}
    assert list(rows) == ["all", "level 1", "level 2", "means", "tables"]
    assert rows["all"] == ["3", "0.33", "0.33", "10.0", "4.0", "1000", "0.0100"]
    assert rows["level 2"][:3] == ["2", "0.00", "0.00"]
    assert rows["tables"][:3] == ["2", "0.50", "0.50"]  # a (its concept) and b (its topic)


def test_failures_are_shared_out_by_cause_in_the_table_and_the_report() -> None:
    assert cause_rows(SAMPLES) == [["full", "2", "0%", "50%", "0%", "0%", "50%", "0%"]]
    text = markdown(SUITE, SAMPLES, repeat=1, mode="replay", started="now")
    assert "| full | 2 | 0% | 50% | 0% | 0% | 50% | 0% |" in text
    assert "| level 2 | 2 | 0.00 | 0.00 | 10.0 | 4.0 | 1000 | 0.0100 |" in text
