"""The scripted model behind the goal study end-to-end test: answers by tool and prompt text.

A study of how ``y`` depends on ``x`` in ``points.csv`` (a bent curve, one row without ``y``)
runs three cycles. Cycle 1 cleans the table (``data`` writes ``data.csv``), fits a straight
line for H1 (refuted by its verified ``r2``) and plots the points (the plot's job fails: a
blocker). The rules pivot to H2; cycle 2 fits a parabola to the raw table but reads a column
that does not exist, so H2 stays open and the rules ask to fix it; cycle 3 fits the parabola
to cycle 1's cleaned data, reused (``c1.data``) rather than cleaned again (its first draft
reuses cycle 2's failed fit and is sent back), and meets the acceptance criterion. Each
cycle's planner is told its cycle by the study section, and the coder's request by the
task's action; the more specific route comes first, since a dependent task's coder also sees
its dependency's action.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic, ToolUse

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "study-goal"
GOAL = (EXAMPLE / "goal.txt").read_text(encoding="utf-8").strip()
"""The example study's goal (``examples/study-goal``), whose recording these answers made."""

DATA = """\
import csv
import json

with open("points.csv", newline="", encoding="utf-8") as handle:
    rows = [r for r in csv.DictReader(handle) if r["x"].strip() and r["y"].strip()]
with open("data.csv", "w", encoding="utf-8") as out:
    out.write("x,y\\n" + "".join(f"{r['x']},{r['y']}\\n" for r in rows))
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows)}, out)
print("kept", len(rows), "rows")
"""

FIT = """\
import csv
import hashlib
import json

PATH, DEGREE, COLUMN = {path!r}, {degree}, {column!r}
with open(PATH, "rb") as handle:
    digest = hashlib.sha256(handle.read()).hexdigest()
with open(PATH, newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
xs = [float(r["x"]) for r in rows]
ys = [float(r[COLUMN]) for r in rows]
n = DEGREE + 1
a = [[sum(x ** (i + j) for x in xs) for j in range(n)] + [sum(y * x ** i for x, y in
                                                          zip(xs, ys))] for i in range(n)]
for col in range(n):  # Gauss-Jordan on the normal equations
    pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
    a[col], a[pivot] = a[pivot], a[col]
    for r in range(n):
        if r != col:
            f = a[r][col] / a[col][col]
            a[r] = [v - f * w for v, w in zip(a[r], a[col])]
coef = [a[i][n] / a[i][i] for i in range(n)]
pred = [sum(c * x ** i for i, c in enumerate(coef)) for x in xs]
mean = sum(ys) / len(ys)
ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
ss_tot = sum((y - mean) ** 2 for y in ys)
r2 = 1 - ss_res / ss_tot
rmse = (ss_res / len(ys)) ** 0.5
with open("fit.json", "w", encoding="utf-8") as out:
    json.dump({{"degree": DEGREE, "coefficients": coef, "read": PATH, "sha256": digest}}, out)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({{"r2": r2, "rmse": rmse, "rows": len(ys), "degree": DEGREE}}, out)
print("r2", r2, "rmse", rmse)
"""

PLOT = """\
raise SystemExit("no plotting backend is installed in this environment")
"""

CHECK_ROWS = {"metric": "rows", "op": "==", "value": 60}
FIT_CRITERIA = ["r2 and rmse over every row", "fit.json gives the coefficients"]

PLAN_1 = {
    "context": "Test the simplest explanation first (a straight line, H1) beside a parabola.",
    "hypotheses": [
        {"id": "H1", "statement": "y grows linearly with x: a line explains 90% of it",
         "test": {"metric": "r2", "op": ">=", "threshold": 0.9, "task_id": "fit"}},
        {"id": "H2", "statement": "y bends with x: a parabola explains 90% of it",
         "test": {"metric": "r2", "op": ">=", "threshold": 0.9}}],
    "tasks": [
        {"task_id": "data", "priority": "HIGH", "inputs": ["points.csv"],
         "action": "Clean the points table: keep the rows with both x and y; write data.csv.",
         "acceptance_criteria": ["data.csv has columns x and y"], "checks": [CHECK_ROWS]},
        {"task_id": "fit", "priority": "HIGH", "dependencies": ["data"], "hypothesis": "H1",
         "action": "Fit a straight line to deps/data/data.csv by least squares.",
         "acceptance_criteria": FIT_CRITERIA, "checks": [CHECK_ROWS]},
        {"task_id": "plot", "priority": "LOW", "dependencies": ["data"],
         "action": "Plot the cleaned points as plot.png.",
         "acceptance_criteria": ["plot.png shows every point"]}],
}

PLAN_2 = {
    "context": "Pivot to H2: a parabola, fitted straight from the raw table.",
    "tasks": [
        {"task_id": "fit", "priority": "HIGH", "hypothesis": "H2", "inputs": ["points.csv"],
         "action": "Fit a parabola to the raw points table (its column yy) by least squares.",
         "acceptance_criteria": FIT_CRITERIA, "checks": [CHECK_ROWS]}],
}

FIT_3: dict[str, Any] = {
    "task_id": "fit", "priority": "HIGH", "hypothesis": "H2", "reuse": ["c1.data"],
    "action": "Fit a parabola to cycle 1's cleaned data (deps/c1.data/data.csv) by least "
              "squares.",
    "acceptance_criteria": FIT_CRITERIA, "checks": [CHECK_ROWS]}

PLAN_3 = {
    "context": "Fix H2's fit: use the table cycle 1 cleaned and verified, without cleaning it "
               "again.",
    "tasks": [FIT_3],
}

PLAN_3_FIRST = {**PLAN_3, "tasks": [{**FIT_3, "reuse": ["c2.fit"]}]}
"""Cycle 3's first draft reuses cycle 2's fit, which failed: it goes back to the planner."""
REFUSED = "reuse ['c2.fit'] are not completed tasks of an earlier cycle"

ANSWER: dict[str, Any] = {
    "answer": "A parabola: it explains nearly all of y's variance; a line does not.",
    "analysis": "The verified r2 of each fit decides.", "caveats": []}

SYNTHESIS: dict[str, Any] = {
    "conclusion": "y bends with x: a parabola explains it and a straight line does not.",
    "statements": [
        {"kind": "found", "text": "A straight line falls short of the criterion (H1 refuted).",
         "cites": [{"cycle": 1, "task_id": "fit", "metric": "r2"}]},
        {"kind": "found", "text": "A parabola fitted to the cleaned data meets it (H2 "
                                  "supported).",
         "cites": [{"cycle": 3, "task_id": "fit", "metric": "r2"}]},
        {"kind": "open", "text": "The plot was never drawn: no plotting backend.",
         "cites": [{"cycle": 1, "task_id": "plot", "artifact": "plot.png"}]}]}
"""The study synthesizer's answer, citing the cycles' verified fits."""


def job(code: str, artifacts: list[str], metrics: list[str]) -> dict[str, object]:
    """A coder's answer."""
    return {"code": code, "expected_artifacts": artifacts, "expected_metrics": metrics,
            "resources": {"memory_mb": 256, "timeout_s": 60}, "confidence": 0.8,
            "reasoning": "standard library only"}


def fit_job(path: str, degree: int, column: str = "y") -> dict[str, object]:
    return job(FIT.format(path=path, degree=degree, column=column), ["fit.json"],
               ["r2", "rmse", "rows", "degree"])


def sized(answer: Any) -> ToolUse:
    """A tool call whose token counts the server derives from the sizes involved."""
    return ToolUse(answer, usage=None)


def script(fake: FakeAnthropic) -> None:
    """Teach ``fake`` every answer of the study's three cycles."""
    fake.on_tool("StudyPlanDraftOutput", sized(PLAN_3), containing=REFUSED)
    fake.on_tool("StudyPlanDraftOutput", sized(PLAN_3_FIRST), containing="This is cycle 3 of")
    fake.on_tool("StudyPlanDraftOutput", sized(PLAN_2), containing="This is cycle 2 of")
    fake.on_tool("StudyPlanDraftOutput", sized(PLAN_1), containing="This is cycle 1 of")
    fake.on_tool("PlanReviewOutput", sized({"verdict": "APPROVE", "concerns": [],
                                              "reasoning": "each fit reports r2"}))
    fake.on_tool("JobOutput", sized(fit_job("deps/c1.data/data.csv", 2)),
                 containing="cycle 1's cleaned data")
    fake.on_tool("JobOutput", sized(fit_job("points.csv", 2, "yy")),
                 containing="raw points table")
    fake.on_tool("JobOutput", sized(job(PLOT, ["plot.png"], [])), containing="Plot the cleaned")
    fake.on_tool("JobOutput", sized(fit_job("deps/data/data.csv", 1)),
                 containing="Fit a straight line")
    fake.on_tool("JobOutput", sized(job(DATA, ["data.csv"], ["rows"])),
                 containing="Clean the points table")
    fake.on_tool("RunAnswer", sized(ANSWER))
    fake.on_tool("SynthesisOutput", sized(SYNTHESIS))
    # the plot's SystemExit is a failure no rule names: the reflector finds no setting to change
    fake.on_tool("ReflectorOutput", sized({
        "root_cause": "missing_dependency", "likely_fix": "plot without a missing backend",
        "reason": "the job exits because no plotting backend is installed; no argument or "
                  "resource change installs one, the code must change", "changes": []}))
