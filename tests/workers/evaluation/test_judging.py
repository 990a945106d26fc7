"""A run with no answer, or no way to ask the judge, fails with the reason, never an error."""

from __future__ import annotations

from pathlib import Path

from workers.evaluation.judging import answer_text, judge_run
from workers.evaluation.report import markdown
from workers.evaluation.runner import Sample
from workers.evaluation.suite import Suite, SuiteTask
from workers.settings import Settings

TASK = SuiteTask(id="db", level=2, goal="How does income relate to age?",
                 hypothesis="Income rises with age.")


def test_the_answer_judged_is_the_answer_and_its_analysis() -> None:
    assert answer_text({"answer": {"answer": "Up.", "analysis": "By 1,300 a year."}}) == (
        "Up.\n\nBy 1,300 a year.")
    assert answer_text({"answer": None}) == ""


async def test_no_answer_or_no_judge_is_a_failure_with_its_reason(tmp_path: Path) -> None:
    settings = Settings.model_validate({"data_dir": tmp_path})
    none = await judge_run(settings, TASK, {"answer": None}, record=None, replay=None)
    assert (none.passed, none.line) == (False, "answer format: the run gave no answer to judge")
    unasked = await judge_run(settings, TASK, {"answer": {"answer": "Up."}}, record=None,
                              replay=None)
    assert not unasked.passed and unasked.line.startswith("judge: not judged (no key")
    missing = tmp_path / "judge.jsonl"
    missing.write_text("")
    empty = await judge_run(settings, TASK, {"answer": {"answer": "Up."}}, record=None,
                            replay=missing)
    assert not empty.passed and empty.line.startswith("judge: not judged (")


def test_the_report_gives_each_judged_run_its_verdict_and_reasons() -> None:
    sample = Sample(task="db", level=2, configuration="full", repeat=1, passed=True,
                    judgement={"context": 1, "variables": 1, "relationship": 0.5,
                               "score": 0.5, "matches": True, "reasons": "Same direction."})
    text = markdown(Suite(name="s", tasks=[TASK]), [sample], repeat=1, mode="live",
                    started="now")
    assert ("- `full` db #1: match (context 1, variables 1, relationship 0.5; score 0.5): "
            "Same direction.") in text
