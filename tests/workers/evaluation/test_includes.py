"""A suite's ``include``: one task per file, paths relative to that file, bad files refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.evaluation.suite import SuiteError, load_suite

GOAL: dict[str, Any] = {
    "id": "h1-mean", "level": 1, "topic": "statistics", "goal": "What is the mean of x?",
    "data": ["table.csv"], "replay": "recording.jsonl",
    "answer_format": "@mean_x[mean], a number rounded to two decimal places",
    "labels": {"mean_x": "1.50"}}


def goal_folder(root: Path, name: str, entry: Any) -> Path:
    folder = root / "goals" / name
    folder.mkdir(parents=True)
    (folder / "table.csv").write_text("x\n1\n2\n")
    (folder / "recording.jsonl").write_text("")
    (folder / "task.json").write_text(entry if isinstance(entry, str) else json.dumps(entry))
    return folder


def suite_with_include(root: Path, tasks: list[dict[str, Any]] | None = None,
                       include: Any = ("goals/*/task.json",)) -> Path:
    path = root / "suite.json"
    path.write_text(json.dumps({"name": "s", "tasks": tasks or [], "include": list(include)}))
    return path


def test_included_tasks_join_the_suite_with_paths_relative_to_their_own_file(
        tmp_path: Path) -> None:
    goal_folder(tmp_path, "b", {**GOAL, "id": "h1-b"})
    goal_folder(tmp_path, "a", {**GOAL, "id": "h1-a"})
    suite, base = load_suite(suite_with_include(tmp_path))
    assert [t.id for t in suite.tasks] == ["h1-a", "h1-b"]  # in the order of their paths
    (first, _) = suite.tasks
    assert first.data == ["goals/a/table.csv"] and first.replay == "goals/a/recording.jsonl"
    assert (base / first.data[0]).read_text() == "x\n1\n2\n"


def test_an_include_that_matches_nothing_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("x\n1\n")
    listed = {**GOAL, "data": ["t.csv"], "replay": None}
    suite, _ = load_suite(suite_with_include(tmp_path, [listed]))
    assert [t.id for t in suite.tasks] == ["h1-mean"]


@pytest.mark.parametrize(("entry", "message"), [
    ("{not json", "invalid JSON at line 1"),
    ([GOAL], "holds one task entry"),
    ({**GOAL, "labels": {}}, "`labels` and `answer_format` go together"),
    ({**GOAL, "answer_format": "a number"}, "invalid included task"),
    ({**GOAL, "colour": "red"}, "Extra inputs are not permitted"),
    ({**GOAL, "data": ["missing.csv"]}, "data 'missing.csv' does not exist"),
])
def test_a_malformed_included_file_is_refused_naming_it(tmp_path: Path, entry: Any,
                                                         message: str) -> None:
    folder = goal_folder(tmp_path, "x", entry)
    with pytest.raises(SuiteError) as raised:
        load_suite(suite_with_include(tmp_path))
    assert message in str(raised.value)
    assert str(folder / "task.json") in str(raised.value)


def test_an_include_leaving_the_suite_folder_or_repeating_an_id_is_refused(
        tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="stays inside its folder"):
        load_suite(suite_with_include(tmp_path, include=["../*/task.json"]))
    goal_folder(tmp_path, "a", GOAL)
    (tmp_path / "t.csv").write_text("x\n1\n")
    with pytest.raises(SuiteError, match="h1-mean appear twice"):
        load_suite(suite_with_include(tmp_path, [{**GOAL, "data": ["t.csv"],
                                                  "replay": None}]))
