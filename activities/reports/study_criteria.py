"""The study report's acceptance criteria, and its warnings on tests written on a point.

A criterion is ``met`` (yes), ``unmet`` (no) or ``inconclusive``: no criterion fails but an
interval includes its threshold, which the line then says. A test written on a metric's
point (``r2_gain >= 0.01``) when the metric has an interval is judged on the interval
(``workflows.study.verdicts``); the report warns of each such test, so that its author
writes what they mean: ``r2_gain.ci >= 0.01`` (the interval), or a number of it
(``r2_gain.ci_low``, ``r2_gain.value``).
"""

from __future__ import annotations

from activities.reports.branches import md
from activities.reports.numbers import value
from workflows.contracts.estimates import interval, reading
from workflows.contracts.hypotheses import HypothesisTest, HypothesisTree
from workflows.contracts.study import CycleSummary
from workflows.study.verdicts import acceptance

REASON_CHARS = 240
NONE = "—"
HOLDS = {"met": "yes", "unmet": "no", "inconclusive": "inconclusive"}


def criteria(tests: list[HypothesisTest], last: CycleSummary) -> list[str]:
    """The acceptance criteria's table on the ``last`` cycle: holds, values, why."""
    if not tests:
        return ["", "No acceptance criteria were set: the study stops by its cycle limit, "
                "budget, lack of progress or a person."]
    lines = ["", f"Acceptance criteria on cycle {last.cycle}:", "",
             "| criterion | holds | values | why |", "| --- | --- | --- | --- |"]
    for test in tests:
        status, why = acceptance([test], last)
        values = [f"{value(raw)} (task {t.task_id})" for t in last.tasks
                  if (raw := reading(t.metrics, test.metric or "")[0]) is not None
                  and test.task_id in (None, t.task_id)]
        lines.append(f"| {md(test.describe())} | {HOLDS[status]} "
                     f"| {md(', '.join(values)) if values else NONE} | {md(why, REASON_CHARS)} |")
    return lines


def warnings(tests: list[HypothesisTest], tree: HypothesisTree,
             last: CycleSummary) -> list[str]:
    """A warning for each test written on the point of a metric that has an interval.

    A hypothesis's test is warned of when its evidence has an interval; an acceptance
    criterion when a task of the ``last`` cycle reported its metric with one.
    """
    said = [_warning(f"Hypothesis {h.id}'s test", h.test) for h in tree.hypotheses
            if _on_point(h.test) and any(e.ci is not None for e in h.evidence)]
    said += [_warning("Acceptance criterion", t) for t in tests
             if _on_point(t) and any(interval(reading(o.metrics, t.metric or "")[0])
                                     for o in last.tasks)]
    if not said:
        return []
    return ["", "Warnings:", "", *(f"- {md(s, 2 * REASON_CHARS)}" for s in said)]


def _on_point(test: HypothesisTest) -> bool:
    """Whether ``test`` names a whole metric (``r2``), not its interval or one of its numbers."""
    return test.metric is not None and reading({}, test.metric)[1] is None


def _warning(who: str, test: HypothesisTest) -> str:
    metric = test.metric or ""
    rest = f"{test.op} {value(test.threshold)}"
    return (f"{who} {test.describe()} is written on a point estimate, but {metric} has an "
            "interval: it was judged on the interval (supported only when all of it holds, "
            f"refuted only when none does). Write {metric}.ci {rest} to say so, or name one "
            f"number: {metric}.ci_low, {metric}.value.")
