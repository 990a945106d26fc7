"""DiscoveryBench's layout as an Assay suite.

Each dataset folder holds metadata files (``metadata_<n>.json``: ``domain``,
``domain_knowledge``, ``workflow_tags``, ``datasets`` with their ``name``, ``description`` and
``columns.raw``, and ``queries``: lists of ``{qid, question, true_hypothesis}``) beside the data
files they name. Each query becomes a goal task whose data are the metadata's datasets and
whose words carry the domain knowledge and the columns' meanings; its gold hypothesis is the
reference a judge role scores (context, variables, relationship). A query whose metadata
carries no ``true_hypothesis`` takes it from an answer key CSV in the folder (``dataset``,
``metadataid``, ``query_id``, ``gold_hypothesis``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, cast

from workers.evaluation.imports.reading import BenchmarkError, text

MAX_METADATA_BYTES = 2_000_000


def import_discoverybench(folder: Path, *, limit: int | None = None) -> dict[str, Any]:
    """The suite (as JSON) of a DiscoveryBench folder; paths relative to ``folder``.

    Raises:
        BenchmarkError: no metadata, a file that is not JSON, a dataset missing, a query
            with no gold hypothesis.
    """
    keys = _answer_key(folder)
    tasks: list[dict[str, Any]] = []
    metadata = sorted(folder.rglob("metadata_*.json"))
    if not metadata:
        raise BenchmarkError(f"{folder}: no metadata_<n>.json file (DiscoveryBench keeps one "
                             "per dataset folder, beside its data files)")
    for path in metadata:
        tasks += _tasks(folder, path, keys)
        if limit is not None and len(tasks) >= limit:
            tasks = tasks[:limit]
            break
    return {"name": f"discoverybench-{folder.name}", "description": "DiscoveryBench queries "
            f"imported from {folder.name}: each answer judged against the gold hypothesis "
            "on context, variables and relationship.", "tasks": tasks}


def _load(path: Path) -> dict[str, Any]:
    if path.stat().st_size > MAX_METADATA_BYTES:
        raise BenchmarkError(f"{path}: over {MAX_METADATA_BYTES:,} bytes")
    try:
        value: Any = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as err:
        raise BenchmarkError(f"{path}:{err.lineno}: not JSON ({err.msg})") from None
    if not isinstance(value, dict):
        raise BenchmarkError(f"{path}:1: a JSON object is expected")
    return cast(dict[str, Any], value)


def _answer_key(folder: Path) -> dict[tuple[str, str, str], str]:
    found: dict[tuple[str, str, str], str] = {}
    for path in sorted(folder.rglob("answer_key*.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as rows:
            for number, row in enumerate(csv.DictReader(rows), start=2):
                try:
                    key = (row["dataset"], row["metadataid"], row["query_id"])
                    found[key] = row["gold_hypothesis"]
                except KeyError as err:
                    raise BenchmarkError(f"{path}:{number}: column {err} is missing") from None
    return found


def _tasks(folder: Path, path: Path, keys: dict[tuple[str, str, str], str],
           ) -> list[dict[str, Any]]:
    meta = _load(path)
    datasets = cast(list[Any], meta.get("datasets") or [])
    if not datasets:
        raise BenchmarkError(f"{path}: `datasets` lists no data file")
    files = [_dataset(path, cast(dict[str, Any], d) if isinstance(d, dict) else {})
             for d in datasets]
    context = _context(meta, datasets)
    metaid = path.stem.removeprefix("metadata_")
    tags: Any = meta.get("workflow_tags") or []
    concepts = ([t.strip() for t in tags.split(",")] if isinstance(tags, str)
                else [str(t) for t in cast(list[Any], tags)])
    tasks: list[dict[str, Any]] = []
    groups = cast(list[Any], meta.get("queries") or [])
    for query in (q for group in groups for q in cast(list[Any], group)):
        record = cast(dict[str, Any], query) if isinstance(query, dict) else {}
        where = f"{path}: query {record.get('qid', '?')}"
        qid = text(record, "qid", where)
        gold = record.get("true_hypothesis") or keys.get((path.parent.name, metaid, qid))
        if not gold:
            raise BenchmarkError(f"{where}: no gold hypothesis (`true_hypothesis`, or a row "
                                 "of an answer_key CSV)")
        task_id = f"db-{path.parent.name}-{metaid}-{qid}".lower().replace("_", "-")[:60]
        tasks.append({"id": task_id, "level": 2, "topic": str(meta.get("domain", ""))[:60],
                      "concepts": [c[:60] for c in concepts if c][:10],
                      "goal": f"{text(record, 'question', where)}\n\n{context}"[:3900],
                      "data": [str(f.relative_to(folder)) for f in files],
                      "hypothesis": str(gold)[:4000]})
    return tasks


def _dataset(path: Path, dataset: dict[str, Any]) -> Path:
    name = text(dataset, "name", f"{path}: a dataset")
    found = path.parent / name
    if not found.is_file():
        raise BenchmarkError(f"{path}: dataset {name!r} is not in {path.parent}")
    return found


def _context(meta: dict[str, Any], datasets: list[Any]) -> str:
    """The domain knowledge and each dataset's description and columns, as the goal's words."""
    lines = [f"Domain: {meta.get('domain', '')}".strip()]
    if meta.get("domain_knowledge"):
        lines.append(f"Domain knowledge: {meta['domain_knowledge']}")
    for item in datasets:
        d = cast(dict[str, Any], item)
        lines.append(f"Dataset {d.get('name')}: {d.get('description', '')}")
        columns: Any = cast(dict[str, Any], d.get("columns") or {}).get("raw") or []
        lines += [f"- {c.get('name')}: {c.get('description', '')}"
                  for c in cast(list[dict[str, Any]], columns)]
    lines.append("Answer with the hypothesis the data support: its context, variables and "
                 "the relationship between them.")
    return "\n".join(lines)
