"""Summaries and details for the Web UI: one line, and never past the server's limits."""

from __future__ import annotations

import json

import pytest

from workflows.contracts.metadata import (
    DETAILS_BYTES,
    SUMMARY_BYTES,
    details_text,
    job_summary,
    summary_line,
    task_details,
    task_summary,
)
from workflows.contracts.plan import Decision


def decision(action: str, **extra: object) -> Decision:
    return Decision.model_validate({"task_id": "fit", "priority": "HIGH", "action": action,
                                    "acceptance_criteria": ["r squared is reported"], **extra})


def encoded(text: str) -> int:
    return len(json.dumps(text))


def test_a_task_summary_names_the_task_its_action_on_one_line_and_its_priority() -> None:
    assert task_summary(decision("Fit the line\n  y ~ x")) == "Task fit · Fit the line y ~ x [HIGH]"


@pytest.mark.parametrize("action", [
    "x" * 4000, "é" * 4000, "\U0001f600" * 1000, '"\\' * 2000, "a\x07\x1b[31m" * 1000,
])
def test_a_hostile_or_oversize_action_is_cut_to_the_limit_and_keeps_the_priority(
        action: str) -> None:
    summary = task_summary(decision(action))
    assert encoded(summary) <= SUMMARY_BYTES
    assert summary.startswith("Task fit · ") and summary.endswith("… [HIGH]")
    assert all(c.isprintable() for c in summary)


def test_details_keep_lines_and_list_dependencies_inputs_job_and_criteria() -> None:
    text = task_details(decision("Fit the line", dependencies=["load"], inputs=["data.csv"]))
    assert text.splitlines()[:3] == ["**Task fit** (HIGH)", "", "Fit the line"]
    for line in ("- Depends on: load", "- Inputs: data.csv", "- Job: written by the coder",
                 "- Accept when: r squared is reported"):
        assert line in text


def test_oversize_details_and_summaries_are_cut_and_marked() -> None:
    text = details_text("line\n" * 10_000)
    assert encoded(text) <= DETAILS_BYTES and text.endswith("…")
    assert summary_line("a  b\n\tc\x1b[31m") == "a b c[31m"
    assert details_text("a\n\x07b") == "a\nb"
    long = summary_line("word " * 500)
    assert encoded(long) <= SUMMARY_BYTES and long.endswith("…")


def test_a_job_summary_names_the_file_and_the_attempt() -> None:
    assert job_summary("fit", "fit.py", 2) == "Task fit · run job fit.py (attempt 2)"
    assert job_summary("fit", None, 1) == "Task fit · run job job.py (attempt 1)"
