"""Benchmark folders imported as suites; malformed ones refused with exit 2, naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.workers.evaluation.benchmark_folders import (
    GOLD,
    LABELS,
    METADATA,
    QUESTIONS,
    dabench_folder,
    discoverybench_folder,
    write_jsonl,
)
from workers.cli.main import app
from workers.evaluation.suite import load_suite

runner = CliRunner()


def imported(kind: str, folder: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["eval", "import", kind, str(folder)])
    return result.exit_code, result.output


def test_a_dabench_folder_becomes_a_suite_of_goals_with_formats_and_labels(
        tmp_path: Path) -> None:
    folder = dabench_folder(tmp_path)
    code, output = imported("dabench", folder)
    assert code == 0, output
    assert "2 tasks (levels 1, 2)" in output
    suite, base = load_suite(folder / "assay-suite.json")
    first, second = suite.tasks
    assert (first.id, first.level, first.topic, second.level) == (
        "dabench-0", 1, "Summary Statistics", 2)
    assert first.goal is not None and "Constraints: Use the arithmetic mean" in first.goal
    assert first.answer_format == QUESTIONS[0]["format"]
    assert (first.labels, first.data) == ({"mean_age": "35.25"}, ["da-dev-tables/people.csv"])
    assert second.concepts == ["Summary Statistics", "Data Access"]
    assert (base / first.data[0]).is_file()


def test_a_discoverybench_folder_becomes_goals_judged_against_their_hypotheses(
        tmp_path: Path) -> None:
    folder = discoverybench_folder(tmp_path)
    code, output = imported("discoverybench", folder)
    assert code == 0, output
    (task,) = load_suite(folder / "assay-suite.json")[0].tasks
    assert (task.id, task.hypothesis, task.topic) == ("db-people-0-0", GOLD, "economics")
    assert task.goal is not None and "- income: yearly income" in task.goal
    assert task.concepts == ["regression", "summary statistics"]


def test_a_gold_hypothesis_may_come_from_the_answer_key(tmp_path: Path) -> None:
    folder = discoverybench_folder(tmp_path)
    meta = folder / "real" / "test" / "people" / "metadata_0.json"
    query = {"qid": 0, "question": "How does income relate to age?"}
    meta.write_text(json.dumps({**METADATA, "queries": [[query]]}))
    code, output = imported("discoverybench", folder)
    assert (code, "query 0: no gold hypothesis" in " ".join(output.split())) == (2, True)
    (folder / "answer_key_real.csv").write_text(
        "dataset,metadataid,query_id,gold_hypothesis\npeople,0,0,Income rises with age.\n")
    assert imported("discoverybench", folder)[0] == 0
    assert load_suite(folder / "assay-suite.json")[0].tasks[0].hypothesis == (
        "Income rises with age.")


def broken_dabench(tmp_path: Path, how: str) -> tuple[Path, str]:
    """A DABench folder broken one way, and what the refusal must name."""
    folder = dabench_folder(tmp_path)
    questions, labels = folder / "da-dev-questions.jsonl", folder / "da-dev-labels.jsonl"
    if how == "no labels file":
        labels.unlink()
        return folder, "one labels file (*labels*.jsonl) is expected; found none"
    if how == "question without label":
        write_jsonl(labels, LABELS[:1])
        return folder, f"{questions}:2: question 1 has no label"
    if how == "unknown table":
        write_jsonl(questions, [QUESTIONS[0], {**QUESTIONS[1], "file_name": "nope.csv"}])
        return folder, f"{questions}:2: table 'nope.csv' is not in"
    if how == "bad line":
        questions.write_text(json.dumps(QUESTIONS[0]) + "\n{not json\n")
        return folder, f"{questions}:2: not JSON"
    write_jsonl(questions, [{**QUESTIONS[0], "format": "the mean age, rounded"}])
    return folder, f"{questions}:1: the answer format 'the mean age, rounded' names no field"


@pytest.mark.parametrize("how", ["no labels file", "question without label", "unknown table",
                                 "bad line", "format without field"])
def test_a_malformed_dabench_folder_is_refused_naming_the_file_and_line(
        tmp_path: Path, how: str) -> None:
    folder, named = broken_dabench(tmp_path, how)
    code, output = imported("dabench", folder)
    assert code == 2, output
    assert named in " ".join(output.split()), output
    assert not (folder / "assay-suite.json").exists()


def test_a_discoverybench_folder_missing_a_dataset_or_gold_is_refused(tmp_path: Path) -> None:
    folder = discoverybench_folder(tmp_path)
    data = folder / "real" / "test" / "people"
    (data / "people.csv").unlink()
    code, output = imported("discoverybench", folder)
    assert (code, "dataset 'people.csv' is not in" in " ".join(output.split())) == (2, True)
    (data / "metadata_0.json").write_text('{"datasets": [\n  oops]}')
    code, output = imported("discoverybench", folder)
    assert (code, "metadata_0.json:2: not JSON" in " ".join(output.split())) == (2, True)
