"""InfiAgent-DABench's layout as an Assay suite.

The folder holds a questions JSONL (``id``, ``question``, ``concepts``, ``constraints``,
``format``, ``file_name``, ``level``), a labels JSONL (``id``, ``common_answers``: a list of
``[name, value]``) and a folder of tables (``*tables*``) the questions name. Each question
becomes a goal task: its words and constraints as the goal, its table as data, its format as
the answer format, its labels as the reference; ``easy``/``medium``/``hard`` are levels 1-3 and
its first concept its topic. A recording ``recordings/<task id>.jsonl`` in the folder, if any,
answers the task offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from workers.evaluation.imports.reading import BenchmarkError, one, records, text
from workflows.common.answer_format import AnswerFormatError, format_names

LEVELS = {"easy": 1, "medium": 2, "hard": 3}


def import_dabench(folder: Path, *, limit: int | None = None) -> dict[str, Any]:
    """The suite (as JSON) of a DABench folder; paths relative to ``folder``.

    Raises:
        BenchmarkError: a file missing, a bad line, a question with no label, an unknown
            table, an answer format naming no field, a label the format does not name.
    """
    questions = one(folder, "*questions*.jsonl", "questions file")
    labels = _labels(one(folder, "*labels*.jsonl", "labels file"))
    tables = one(folder, "*tables*", "tables folder", directory=True)
    tasks: list[dict[str, Any]] = []
    for number, record in records(questions):
        where = f"{questions}:{number}"
        qid = text(record, "id", where)
        if qid not in labels:
            raise BenchmarkError(f"{where}: question {qid} has no label in the labels file")
        tasks.append(_task(folder, tables, record, labels[qid], where))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise BenchmarkError(f"{questions}: no questions")
    return {"name": f"dabench-{folder.name}", "description": "InfiAgent-DABench questions "
            f"imported from {folder.name}: every @name[value] of a question must match.",
            "tasks": tasks}


def _labels(path: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for number, record in records(path):
        where = f"{path}:{number}"
        answers = record.get("common_answers")
        pairs = cast(list[Any], answers) if isinstance(answers, list) else []
        if not pairs or not all(isinstance(p, list) and len(cast(list[Any], p)) == 2
                                for p in pairs):
            raise BenchmarkError(f"{where}: `common_answers` must be a list of [name, value]")
        found[text(record, "id", where)] = {str(n): str(v) for n, v in pairs}
    return found


def _task(folder: Path, tables: Path, record: dict[str, Any], labels: dict[str, str],
          where: str) -> dict[str, Any]:
    qid = text(record, "id", where)
    answer_format = text(record, "format", where)
    try:
        names = format_names(answer_format)
    except AnswerFormatError as err:
        raise BenchmarkError(f"{where}: {err}") from None
    if sorted(names) != sorted(labels):
        raise BenchmarkError(f"{where}: the format's fields {names} are not the labels' "
                             f"{sorted(labels)}")
    table = tables / text(record, "file_name", where)
    if not table.is_file():
        raise BenchmarkError(f"{where}: table {table.name!r} is not in {tables}")
    level = str(record.get("level", "")).lower()
    if level not in LEVELS:
        raise BenchmarkError(f"{where}: level {level!r} is not one of easy, medium, hard")
    concepts = [str(c)[:60] for c in cast(list[Any], record.get("concepts") or [])][:10]
    constraints = str(record.get("constraints") or "").strip()
    goal = text(record, "question", where) + (f"\n\nConstraints: {constraints}"
                                              if constraints else "")
    task: dict[str, Any] = {
        "id": f"dabench-{qid}"[:60], "level": LEVELS[level],
        "topic": concepts[0] if concepts else "", "concepts": concepts, "goal": goal[:3000],
        "data": [str(table.relative_to(folder))], "answer_format": answer_format,
        "labels": labels}
    recording = folder / "recordings" / f"{task['id']}.jsonl"
    if recording.is_file():
        task["replay"] = str(recording.relative_to(folder))
    return task
