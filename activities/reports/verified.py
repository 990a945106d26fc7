"""A run's answer from its verified evidence alone: what a plan run without a model ends with.

The output processor answers a goal, and a plan run when a model is configured. Without one (or
when it gave no answer), the report writer answers from the tasks' verified metrics and checks:
how many tasks completed, how many checks held, each completed task's metrics (estimates with
their intervals) and checks, and as caveats what did not complete or did not hold. It judges
nothing the evidence does not say: it is a deterministic summary, not an interpretation.
"""

from __future__ import annotations

from collections.abc import Sequence

from workflows.contracts.estimates import is_estimate, number, shown
from workflows.contracts.goal import RunAnswer
from workflows.contracts.plaintext import clip
from workflows.contracts.results import TaskResult
from workflows.contracts.words import plural

ANSWERED_BY = "verified evidence (no model)"
"""What the report says wrote such an answer."""
METRICS_SHOWN = 12
"""Metrics listed per task (the task's report has them all)."""
CAVEATS = 20
ANSWER_CHARS, ANALYSIS_CHARS, LINE_CHARS = 4000, 12_000, 600


def verified_answer(tasks: Sequence[TaskResult]) -> RunAnswer | None:
    """The run's answer from its verified metrics and checks (None: the run had no task)."""
    if not tasks:
        return None
    done = [t for t in tasks if t.status == "completed"]
    checks = [c for t in done for c in t.checks]
    passed = sum(c.passed for c in checks)
    unfinished = [t for t in tasks if t.status != "completed"]
    answer = (f"{len(done)} of {plural(len(tasks), 'task')} completed with verified evidence; "
              f"{passed} of {plural(len(checks), 'declared check')} held.")
    if unfinished:
        named = ", ".join(f"{t.task_id} ({t.status})" for t in unfinished[:10])
        answer += f" Not completed: {named}" + (" and more." if len(unfinished) > 10 else ".")
    analysis = "\n".join(_task_line(t) for t in done)
    caveats = [clip(f"task {t.task_id} {t.status}: {t.status_reason}", LINE_CHARS)
               for t in unfinished]
    caveats += [clip(f"task {t.task_id}: check {c.check.describe()} did not hold"
                     + (f": {c.reason}" if c.reason else ""), LINE_CHARS)
                for t in done for c in t.checks if not c.passed]
    caveats.append("Written from the verified metrics and checks alone: no model interpreted "
                   "them, and no claim beyond them is made.")
    return RunAnswer(answer=clip(answer, ANSWER_CHARS),
                     analysis=clip(analysis, ANALYSIS_CHARS),
                     caveats=caveats[-CAVEATS:] if len(caveats) > CAVEATS else caveats)


def _task_line(task: TaskResult) -> str:
    """``fit: r2 = 0.93 [0.91, 0.94] 95 %, rows = 300; checks: r2 > 0 held, rows == 300 held``."""
    metrics = [f"{name} = {shown(value)}" for name, value in task.metrics.items()
               if number(value) is not None or is_estimate(value)][:METRICS_SHOWN]
    checks = [f"{c.check.describe()} {'held' if c.passed else 'did not hold'}"
              for c in task.checks]
    parts = [f"{task.task_id}: {', '.join(metrics) or 'no numeric metric'}"]
    if checks:
        parts.append(f"checks: {', '.join(checks)}")
    return clip("; ".join(parts), LINE_CHARS)
