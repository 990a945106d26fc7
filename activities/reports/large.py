"""The Markdown report of a large run: summary tables, each task's detail in its own file.

A run of over :data:`LARGE_RUN` tasks gets, instead of a section per task, the counts by
status and by priority, each metric's spread over the completed tasks, the tasks that did
not complete (the first :data:`LISTED` of them, with why), and where every task's whole
result is: ``tasks/<task_id>.json`` beside the report, and all of them in the results JSON.
The tasks' timeline figure is left out too (a row per task would be an image of 10 000
rows).
"""

from __future__ import annotations

import statistics
from collections import Counter

from activities.reports.numbers import duration, number
from activities.reports.tasks import one_line, task_seconds
from workflows.contracts.estimates import number as metric_number
from workflows.contracts.results import RunReport, TaskResult

LARGE_RUN = 1000
"""Runs of more tasks than this get the summary report."""
LISTED = 100
"""Tasks listed by name among those that did not complete."""
METRICS = 50
"""Metrics summarised at most (the most reported first)."""
ANSWER_LINES = 40
"""Lines of the answer shown (one made from the verified metrics has a line a task)."""


def is_large(report: RunReport) -> bool:
    """Whether ``report`` gets the summary report."""
    return len(report.tasks) > LARGE_RUN


def render_large(report: RunReport, head: list[str]) -> str:
    """The summary report of a large run, after ``head`` (the usual header lines)."""
    tasks = report.tasks
    return "\n".join([*head, *_statuses(tasks), *_priorities(report), *_times(tasks),
                      *_metrics(tasks), *_unfinished(tasks), *_files(report)]) + "\n"


def capped(lines: list[str]) -> list[str]:
    """The answer's section, its first :data:`ANSWER_LINES` lines if it is longer."""
    if len(lines) <= ANSWER_LINES:
        return lines
    return [*lines[:ANSWER_LINES], "", f"({len(lines) - ANSWER_LINES} more lines of the "
            "answer are in the results JSON, under `answer`.)"]


def _statuses(tasks: list[TaskResult]) -> list[str]:
    counts = Counter(t.status for t in tasks)
    return ["", "## Tasks by status", "", "| status | tasks | share |", "| --- | ---: | ---: |",
            *(f"| {s} | {n} | {n / len(tasks):.1%} |" for s, n in counts.most_common())]


def _priorities(report: RunReport) -> list[str]:
    return ["", "## Completion by priority", "", "| priority | completed | total | rate |",
            "| --- | ---: | ---: | ---: |",
            *(f"| {p} | {int(row['completed'])} | {int(row['total'])} | {row['rate']:.0%} |"
              for p, row in report.completion_by_priority.items())]


def _times(tasks: list[TaskResult]) -> list[str]:
    seconds = sorted(s for t in tasks if (s := task_seconds(t)) is not None)
    if not seconds:
        return []
    return ["", "## Task time", "", "| tasks timed | median | p95 | longest |",
            "| ---: | ---: | ---: | ---: |",
            f"| {len(seconds)} | {duration(statistics.median(seconds))} "
            f"| {duration(seconds[int(0.95 * (len(seconds) - 1))])} | {duration(seconds[-1])} |"]


def _metrics(tasks: list[TaskResult]) -> list[str]:
    """Each metric's count, min, median and max over the completed tasks."""
    values: dict[str, list[float]] = {}
    for task in tasks:
        if task.status != "completed":
            continue
        for name, raw in task.metrics.items():
            found = metric_number(raw)
            if found is not None:
                values.setdefault(name, []).append(found)
    if not values:
        return []
    names = sorted(values, key=lambda n: (-len(values[n]), n))[:METRICS]
    lines = ["", "## Metrics of the completed tasks", "",
             "| metric | tasks | min | median | max |", "| --- | ---: | ---: | ---: | ---: |"]
    for name in names:
        got = values[name]
        lines.append(f"| `{name}` | {len(got)} | {number(min(got))} "
                     f"| {number(statistics.median(got))} | {number(max(got))} |")
    if len(values) > METRICS:
        lines.append(f"\n{len(values) - METRICS} more metrics are in the results JSON.")
    return lines


def _unfinished(tasks: list[TaskResult]) -> list[str]:
    left = [t for t in tasks if t.status != "completed"]
    if not left:
        return ["", "Every task completed."]
    lines = ["", "## Tasks that did not complete", "", "| task | status | why |",
             "| --- | --- | --- |",
             *(f"| `{t.task_id}` | {t.status} | {one_line(t.status_reason)[:300]} |"
               for t in left[:LISTED])]
    if len(left) > LISTED:
        lines.append(f"\nThe first {LISTED} of {len(left)}; the results JSON lists them all.")
    return lines


def _files(report: RunReport) -> list[str]:
    results = report.report.results_json.rsplit("/", 1)[-1] if report.report else "the results JSON"
    return ["", "## Each task's detail", "",
            f"A run of {len(report.tasks)} tasks is summarised above. Each task's whole result "
            "(its job, reviews, checks, metrics, artifacts and provenance) is in "
            f"`tasks/<task_id>.json` beside this report, and every task's in `{results}`."]
