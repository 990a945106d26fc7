"""The scripted model behind the goal end-to-end test: answers by tool and prompt text.

A goal about ``tests/data/goal/measurements.csv`` (24 values in groups a and b) is planned in
two tasks. The first task's job is right; the second's reads a column that does not exist, so
it fails in the sandbox, reflection has no patch for code, and the three debuggers each fix it
(the diagnostic one after running a script that prints the table's columns). Every answer is
routed by the tool the request offers, so concurrent calls get the right one in any order.
Token counts are the server's estimate from sizes (about four bytes a token), not a model's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fake_anthropic import FakeAnthropic, ToolUse

GOAL = (Path(__file__).resolve().parent.parent / "examples" / "goal" / "goal.txt").read_text(
    encoding="utf-8").strip()
"""The example goal (``examples/goal``), whose recording the scripted answers made."""

DESCRIBE = """\
import csv
import json

with open("measurements.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
groups = {}
for row in rows:
    groups.setdefault(row["group"], []).append(float(row["value"]))
means = {name: sum(values) / len(values) for name, values in sorted(groups.items())}
with open("summary.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "means": means}, out, indent=2)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows)}, out)
print("rows", len(rows), "means", means)
"""

COMPARE = """\
import csv
import json

with open("measurements.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
a = [float(row["value"]) for row in rows if row["grp"] == "a"]
b = [float(row["value"]) for row in rows if row["grp"] == "b"]
difference = sum(b) / len(b) - sum(a) / len(a)
with open("comparison.json", "w", encoding="utf-8") as out:
    json.dump({"difference": difference}, out)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"difference": round(difference, 6)}, out)
"""

FIXED = COMPARE.replace('row["grp"]', 'row["group"]')

DIAGNOSE = """\
import csv

with open("measurements.csv", newline="", encoding="utf-8") as handle:
    print("columns:", next(csv.reader(handle)))
"""

PLAN = {
    "context": "Two steps: describe the table, then compare the group means.",
    "tasks": [
        {"task_id": "describe", "priority": "HIGH",
         "action": "Describe the measurements table: row count and mean value per group.",
         "acceptance_criteria": ["summary.json lists the mean of every group"],
         "checks": [{"metric": "rows", "op": "==", "value": 24}],
         "inputs": ["measurements.csv"]},
        {"task_id": "compare", "priority": "HIGH", "dependencies": ["describe"],
         "action": "Compare the mean value of group b against group a.",
         "acceptance_criteria": ["comparison.json gives the difference of the means"],
         "checks": [{"metric": "difference", "op": ">", "value": 0}],
         "inputs": ["measurements.csv"]},
    ],
}


def sized(answer: Any) -> ToolUse:
    """A tool call whose token counts the server derives from the sizes involved."""
    return ToolUse(answer, usage=None)


def job(code: str, artifact: str, metric: str) -> dict[str, object]:
    """A coder's answer."""
    return {"code": code, "expected_artifacts": [artifact], "expected_metrics": [metric],
            "resources": {"memory_mb": 256, "timeout_s": 60}, "confidence": 0.8,
            "reasoning": "standard library only"}


def script(fake: FakeAnthropic) -> None:
    """Teach ``fake`` every answer of the goal run."""
    fake.on_tool("PlanDraftOutput", sized(PLAN))
    fake.on_tool("PlanReviewOutput", sized({"verdict": "APPROVE", "concerns": [],
                                              "reasoning": "each task has a check"}))
    fake.on_tool("JobOutput", sized(job(DESCRIBE, "summary.json", "rows")),
                 containing="Describe the measurements table")
    fake.on_tool("JobOutput", sized(job(COMPARE, "comparison.json", "difference")),
                 containing="Compare the mean value")
    fake.on_tool("ModelReviewOutput", sized({"verdict": "APPROVE", "confidence": 0.85,
                                               "warnings": ["no test of significance"],
                                               "reasoning": "reads only its input"}))
    fake.on_tool("DiagnosticOutput", sized({"code": DIAGNOSE,
                                              "purpose": "see the table's columns"}))
    fake.on_tool("DebugOutput", sized({"diagnosis": "the column is named group, not grp",
                                         "code": FIXED, "confidence": 0.9}))
    fake.on_tool("RunAnswer", sized({
        "answer": "Yes: group b's mean is higher than group a's.",
        "analysis": "describe counted 24 rows; compare found a positive difference.",
        "caveats": ["no significance test was run"]}))
