"""Small folders in DABench's and DiscoveryBench's layouts, and the model that answers them.

Written for the tests (none of the benchmarks' files): a people table with two DABench
questions (the second answered with a misread column, as a real model might) and one
DiscoveryBench query whose gold hypothesis the judge finds matched. ``script`` teaches a
scripted Messages API server every role a run of them calls, routed by tool and question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic, ToolUse

PEOPLE = "age,city,income\n31,Oslo,52000\n45,Bergen,61000\n27,Oslo,38000\n38,Oslo,57000\n"
MEAN_AGE = "What is the mean age of the people in the table?"
MAX_INCOME = "What is the highest income in the table?"
QUESTIONS = [
    {"id": 0, "question": MEAN_AGE, "concepts": ["Summary Statistics"],
     "constraints": "Use the arithmetic mean over every row.",
     "format": '@mean_age[mean_age], where "mean_age" is a number rounded to two decimal '
               'places.', "file_name": "people.csv", "level": "easy"},
    {"id": 1, "question": MAX_INCOME, "concepts": ["Summary Statistics", "Data Access"],
     "constraints": "Report the value as it is in the table.",
     "format": '@max_income[max_income], where "max_income" is an integer.',
     "file_name": "people.csv", "level": "medium"},
]
LABELS = [{"id": 0, "common_answers": [["mean_age", "35.25"]]},
          {"id": 1, "common_answers": [["max_income", "61000"]]}]

INCOME_QUERY = "How does income relate to age in this population?"
GOLD = "Among these adults, income rises with age, by about 1,300 per year."
METADATA = {
    "id": 0, "domain": "economics", "workflow_tags": "regression, summary statistics",
    "domain_knowledge": "Income usually grows with experience.",
    "datasets": [{"name": "people.csv", "description": "Adults with their age and income.",
                  "columns": {"raw": [{"name": "age", "description": "age in years"},
                                      {"name": "income", "description": "yearly income"}]}}],
    "queries": [[{"qid": 0, "question": INCOME_QUERY, "true_hypothesis": GOLD}]],
}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def dabench_folder(root: Path) -> Path:
    """A DABench-shaped folder: questions, labels, and a tables folder with one table."""
    folder = root / "dabench"
    (folder / "da-dev-tables").mkdir(parents=True)
    (folder / "da-dev-tables" / "people.csv").write_text(PEOPLE, encoding="utf-8")
    write_jsonl(folder / "da-dev-questions.jsonl", QUESTIONS)
    write_jsonl(folder / "da-dev-labels.jsonl", LABELS)
    return folder


def discoverybench_folder(root: Path) -> Path:
    """A DiscoveryBench-shaped folder: one dataset folder with its metadata and table."""
    data = root / "discoverybench" / "real" / "test" / "people"
    data.mkdir(parents=True)
    (data / "people.csv").write_text(PEOPLE, encoding="utf-8")
    (data / "metadata_0.json").write_text(json.dumps(METADATA), encoding="utf-8")
    return root / "discoverybench"


STATS = """\
import csv
import json

with open("people.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
ages = [float(r["age"]) for r in rows]
incomes = [float(r["income"]) for r in rows]
n = len(rows)
mean_age = sum(ages) / n
mean_income = sum(incomes) / n
slope = (sum((a - mean_age) * (i - mean_income) for a, i in zip(ages, incomes))
         / sum((a - mean_age) ** 2 for a in ages))
result = {"mean_age": mean_age, "max_income": max(incomes), "min_income": min(incomes),
          "income_per_year": slope, "n": n}
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump(result, out)
print(json.dumps(result))
"""

PLAN = {"context": "One step: summarise the table.",
        "tasks": [{"task_id": "stats", "priority": "HIGH",
                   "action": "Compute the mean age, the income range and the income slope "
                             "on age of people.csv.",
                   "acceptance_criteria": ["metrics give mean_age and max_income"],
                   "checks": [{"metric": "n", "op": ">", "value": 0}],
                   "inputs": ["people.csv"]}]}


def cite(name: str, metric: str) -> dict[str, str]:
    return {"name": name, "task_id": "stats", "metric": metric}


def script(fake: FakeAnthropic) -> None:
    """Every role's answers: one plan, one job, approvals, then each question's answer."""
    fake.on_tool("PlanDraftOutput", ToolUse(PLAN, usage=None))
    fake.on_tool("PlanReviewOutput", ToolUse({"verdict": "APPROVE", "concerns": [],
                                               "reasoning": "one task"}, usage=None))
    fake.on_tool("JobOutput", ToolUse({
        "code": STATS, "expected_metrics": ["mean_age", "max_income", "n"],
        "resources": {"memory_mb": 256, "timeout_s": 120}, "confidence": 0.9}, usage=None))
    fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.9},
                                              usage=None))
    fake.on_tool("RunAnswerInFormat", ToolUse({
        "answer": "The mean age is 35.25.", "in_format": "@mean_age[35.25]",
        "cites": [cite("mean_age", "mean_age")]}, usage=None), containing=MEAN_AGE)
    fake.on_tool("RunAnswerInFormat", ToolUse({  # the lowest income read for the highest
        "answer": "The highest income is 38000.", "in_format": "@max_income[38000]",
        "cites": [cite("max_income", "max_income")]}, usage=None), containing=MAX_INCOME)
    fake.on_tool("RunAnswer", ToolUse({
        "answer": "Income rises with age: about 1,290 more per year of age.",
        "analysis": "stats fitted income on age over the four rows."}, usage=None))
    fake.on_tool("JudgeOutput", ToolUse({
        "context": 1, "variables": 1, "relationship": 1,
        "reasons": "Same adults, same variables, same rising relationship of a like size."},
        usage=None))
