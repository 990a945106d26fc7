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

from tests.support.fake_anthropic import FakeAnthropic, ToolUse

GOAL = (Path(__file__).resolve().parents[2] / "examples" / "goal" / "goal.txt").read_text(
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
import math
import statistics

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt


def incomplete_beta(a, b, x):
    # the regularized incomplete beta I_x(a, b), by its continued fraction
    if x <= 0 or x >= 1:
        return min(max(x, 0.0), 1.0)
    if x > (a + 1) / (a + b + 2):
        return 1 - incomplete_beta(b, a, 1 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1 - x)) / a
    c, d, f = 1.0, 0.0, 1.0
    for i in range(400):
        m = i // 2
        if i == 0:
            step = 1.0
        elif i % 2 == 0:
            step = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            step = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + step * d
        d = 1 / (d if abs(d) > 1e-30 else 1e-30)
        c = 1 + step / (c if abs(c) > 1e-30 else 1e-30)
        f *= c * d
        if abs(1 - c * d) < 1e-12:
            break
    return front * (f - 1)


with open("measurements.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
a = [float(row["value"]) for row in rows if row["grp"] == "a"]
b = [float(row["value"]) for row in rows if row["grp"] == "b"]
va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
difference = statistics.fmean(b) - statistics.fmean(a)
t = difference / math.sqrt(va + vb)
df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
p = incomplete_beta(df / 2, 0.5, df / (df + t * t))
result = {"difference": difference, "t_statistic": t, "df": df, "p_value": p,
          "test": "Welch's two-sided t-test"}
with open("comparison.json", "w", encoding="utf-8") as out:
    json.dump(result, out, indent=2)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({k: v for k, v in result.items() if k != "test"}, out)
figure, axes = plt.subplots(figsize=(5, 3.5))
axes.boxplot([a, b], tick_labels=["a", "b"])
axes.set_ylabel("value")
axes.set_title(f"b - a = {difference:.3g} (Welch t = {t:.3g}, p = {p:.2g})")
figure.tight_layout()
figure.savefig("comparison.png", dpi=100)
with open("findings.md", "w", encoding="utf-8") as out:
    out.write(f"Group b's mean exceeds group a's by {difference:.3g} "
              f"(Welch's t = {t:.3g}, df = {df:.3g}, two-sided p = {p:.2g}; "
              f"n = {len(a)} and {len(b)}).\\n")
print(json.dumps(result))
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
         "action": "Compare the mean value of group b against group a with Welch's t-test.",
         "acceptance_criteria": ["comparison.json gives the difference of the means, the t "
                                 "statistic, its degrees of freedom and the p-value",
                                 "comparison.png shows both groups; findings.md says what "
                                 "the test found"],
         "checks": [{"metric": "difference", "op": ">", "value": 0}],
         "inputs": ["measurements.csv"]},
    ],
}


def sized(answer: Any) -> ToolUse:
    """A tool call whose token counts the server derives from the sizes involved."""
    return ToolUse(answer, usage=None)


def job(code: str, artifacts: list[str], metrics: list[str], *, memory_mb: int = 256,
        reasoning: str = "standard library only") -> dict[str, object]:
    """A coder's answer."""
    return {"code": code, "expected_artifacts": artifacts, "expected_metrics": metrics,
            "resources": {"memory_mb": memory_mb, "timeout_s": 120}, "confidence": 0.8,
            "reasoning": reasoning}


def script(fake: FakeAnthropic) -> None:
    """Teach ``fake`` every answer of the goal run."""
    fake.on_tool("PlanDraftOutput", sized(PLAN))
    fake.on_tool("PlanReviewOutput", sized({"verdict": "APPROVE", "concerns": [],
                                              "reasoning": "each task has a check"}))
    # compare's coder is also told what describe found (its action too): asked first
    fake.on_tool("JobOutput", sized(job(
        COMPARE, ["comparison.json", "comparison.png", "findings.md"],
        ["difference", "t_statistic", "df", "p_value"], memory_mb=512,
        reasoning="Welch's t-test from the standard library; matplotlib for the figure")),
                 containing="Compare the mean value")
    fake.on_tool("JobOutput", sized(job(DESCRIBE, ["summary.json"], ["rows"])),
                 containing="Describe the measurements table")
    fake.on_tool("ModelReviewOutput", sized({"verdict": "APPROVE", "confidence": 0.85,
                                               "warnings": ["the t-test assumes roughly "
                                                            "normal groups"],
                                               "reasoning": "reads only its input"}))
    fake.on_tool("DiagnosticOutput", sized({"code": DIAGNOSE,
                                              "purpose": "see the table's columns"}))
    fake.on_tool("DebugOutput", sized({"diagnosis": "the column is named group, not grp",
                                         "code": FIXED, "confidence": 0.9}))
    fake.on_tool("RunAnswer", sized({
        "answer": "Yes: group b's mean (5.977) is higher than group a's (4.941) by 1.036; "
                  "Welch's two-sided t-test gives t = 7.549 on 19.99 degrees of freedom, "
                  "p = 2.838e-07.",
        "analysis": "describe counted 24 rows, 12 per group; compare ran Welch's t-test, "
                    "which does not assume equal variances, and drew both groups "
                    "(comparison.png).",
        "caveats": ["12 values per group: the t-test's normality assumption is not checked",
                    "one value of group b (5.302) lies below the rest of its group"]}))
