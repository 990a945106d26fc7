"""The scripted model behind the evaluation suite's second goal: a dose-response slope.

The goal (``goal-dose-slope`` in ``examples/eval/plans-suite.json``) asks whether the response rises
linearly with the dose in ``examples/eval/plans/data/dose.csv``. The planner plans one task,
the coder writes a least-squares fit with the standard library, every reviewer approves, and
the output processor answers from the verified metrics. Answers are routed by the tool the
request offers; token counts are the server's estimate from sizes, not a model's.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_anthropic import FakeAnthropic, ToolUse

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "eval" / "plans-suite.json"
TASK = next(t for t in json.loads(SUITE.read_text())["tasks"] if t["id"] == "goal-dose-slope")
GOAL: str = TASK["goal"]
DATA = (SUITE.parent / TASK["data"][0]).resolve()
RECORDING = (SUITE.parent / TASK["replay"]).resolve()

FIT = """\
import csv
import json
import statistics

with open("dose.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
dose = [float(row["dose"]) for row in rows]
response = [float(row["response"]) for row in rows]
fit = statistics.linear_regression(dose, response)
r = statistics.correlation(dose, response)
result = {"slope": fit.slope, "intercept": fit.intercept, "r2": r * r, "n": len(rows)}
with open("fit.json", "w", encoding="utf-8") as out:
    json.dump(result, out, indent=2)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump(result, out)
print(json.dumps(result))
"""

PLAN = {
    "context": "One step: fit the response on the dose by least squares.",
    "tasks": [
        {"task_id": "fit", "priority": "HIGH",
         "action": "Fit response on dose by ordinary least squares in the dose table; report "
                   "slope, intercept and r2.",
         "acceptance_criteria": ["fit.json gives the slope, the intercept and r2"],
         "checks": [{"metric": "r2", "op": ">", "value": 0.5}],
         "inputs": ["dose.csv"]},
    ],
}


def script(fake: FakeAnthropic) -> None:
    """Teach ``fake`` every answer of the dose goal's run."""
    fake.on_tool("PlanDraftOutput", ToolUse(PLAN, usage=None))
    fake.on_tool("PlanReviewOutput", ToolUse({"verdict": "APPROVE", "concerns": [],
                                               "reasoning": "one task with a check"},
                                              usage=None))
    fake.on_tool("JobOutput", ToolUse({
        "code": FIT, "expected_artifacts": ["fit.json"],
        "expected_metrics": ["slope", "intercept", "r2", "n"],
        "resources": {"memory_mb": 256, "timeout_s": 120}, "confidence": 0.85,
        "reasoning": "statistics.linear_regression from the standard library"}, usage=None))
    fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.9,
                                                "warnings": [],
                                                "reasoning": "reads only its input"},
                                               usage=None))
    fake.on_tool("RunAnswer", ToolUse({
        "answer": "Yes: the response rises by about 1.53 per unit of dose (least squares, "
                  "r2 about 0.98).",
        "analysis": "fit regressed response on dose over the 30 rows of dose.csv.",
        "caveats": ["a straight line is assumed; the residuals were not examined"]},
        usage=None))
