"""Selection that respects held-out data, and the rule that decides among tied lines.

**Held out.** A metric is *held out* when its name starts with ``test_`` or the plan lists it
in ``held_out``: it is measured on data kept aside to report the chosen line, so choosing a
line by it (branch and sweep selection, a study's key metric) would let the test set pick the
model. :func:`held_out_problem` refuses such a metric unless the run allows it
(``--allow-test-selection``, policy ``branching.allow_test_selection``), and the report then
says the choice used held-out data. A dotted part (``test_r2.ci_low``) is held out as its metric.

**Ties.** Where the key metric has intervals, two lines whose difference lies within them are
*tied*: the leader's value lies inside the other's interval, or the other's value inside the
leader's (:func:`tied`). A tie is reported as such, and the kept line among the tied ones
follows the declared rule (:data:`~workflows.contracts.alternatives.TieRule`):

- ``simplest``: the line with the fewest parameters changed from the main line (the main line
  changes none), then the earliest (the main line, then branches in the order they started);
- ``cheapest``: the lowest model cost, then sandbox CPU time, then wall time, then the earliest;
- ``person``: a person chooses among the tied lines at a ``branch`` gate.

Pure code: the workflow, the command line and the tests share it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from workflows.contracts.alternatives import Metric, TieRule
from workflows.contracts.branches import MAIN_LINE, BranchRecord, LineScore
from workflows.contracts.plan import Plan
from workflows.contracts.policy import BranchingPolicy

HELD_OUT_PREFIX = "test_"
"""Metrics named with this prefix are held out, whether or not a plan lists them."""
ALLOW_FLAG = "--allow-test-selection"
"""The command-line flag that allows selection on a held-out metric."""


def held_out(name: str, declared: Collection[str] = ()) -> bool:
    """Whether the metric ``name`` (or the metric of a part, ``test_r2.ci_low``) is held out."""
    base = name.split(".", 1)[0]
    return (name.startswith(HELD_OUT_PREFIX) or base.startswith(HELD_OUT_PREFIX)
            or name in declared or base in declared)


def held_out_problem(metric: Metric | None, declared: Collection[str], what: str) -> str:
    """Why ``what`` (``branch selection``, ``the study's key metric``) may not use ``metric``.

    Empty when the metric is not held out (or there is none).
    """
    if metric is None or not held_out(metric.name, declared):
        return ""
    why = ("is listed as held out by the plan" if metric.name in declared
           else f"is held out (its name starts with {HELD_OUT_PREFIX!r})")
    return (f"{what} would use metric {metric.name!r}, which {why}: choosing by it lets the "
            "test data pick the result. Compare on a validation metric (e.g. a cross-validated "
            f"one), or pass {ALLOW_FLAG} (policy branching.allow_test_selection) to allow it")


def plan_problem(plan: Plan | None, policy: BranchingPolicy) -> str:
    """Why a run of ``plan`` under ``policy`` would select on a held-out metric (empty: fine).

    The plan's ``metric``, each task's ``metric`` and the policy's are checked, unless the
    policy allows selection on held-out metrics.
    """
    if policy.allow_test_selection:
        return ""
    declared = plan.held_out if plan is not None else []
    named = [("the plan's metric", plan.metric if plan else None),
             *((f"task {d.task_id}'s metric", d.metric) for d in (plan.decisions if plan else [])),
             ("the policy's branching.metric", policy.metric)]
    for where, metric in named:
        problem = held_out_problem(metric, declared, f"branch selection ({where})")
        if problem:
            return problem
    return ""


def study_problem(key: Metric | None, plans: Sequence[Plan], policy: BranchingPolicy) -> str:
    """Why a study may not use ``key`` as its key metric, or its plans their branch metrics.

    Every plan's ``held_out`` list counts for the key metric. Empty: nothing is held out.
    """
    declared = [name for plan in plans for name in plan.held_out]
    problem = held_out_problem(key, declared, "the study's key metric (--key-metric)")
    for plan in plans:
        problem = problem or plan_problem(plan, policy)
    return problem


def allowed_note(metric: Metric | None, declared: Collection[str]) -> str:
    """What a report says when a held-out metric was allowed to select (empty: it was not)."""
    if metric is None or not held_out(metric.name, declared):
        return ""
    return (f"selected on held-out metric {metric.name!r}, allowed by {ALLOW_FLAG}: the "
            "held-out estimate of the kept line is optimistic")


def tied(a: LineScore, b: LineScore) -> bool:
    """Whether the key metric cannot tell ``a`` and ``b`` apart within its intervals.

    Either's value lies within the other's interval; lines without an interval never tie
    (a point difference is all there is to go by).
    """
    if a.metric is None or b.metric is None or (a.interval is None and b.interval is None):
        return False
    return _inside(a.metric, b.interval) or _inside(b.metric, a.interval)


def ties(order: Sequence[str], lines: dict[str, LineScore]) -> list[str]:
    """The lines tied with the first of ``order`` (it first), in ranking order.

    A line ties only if it equals the first on completion and checks passed, and its key metric
    is within the intervals (:func:`tied`). Fewer than two: no tie (an empty list).
    """
    if not order:
        return []
    best = lines[order[0]]
    found = [order[0], *(name for name in order[1:] if _level(lines[name]) == _level(best)
                         and tied(best, lines[name]))]
    return found if len(found) > 1 else []


def break_tie(tied_lines: Sequence[str], lines: dict[str, LineScore], rule: TieRule,
              changed: dict[str, int], started: Sequence[str]) -> str:
    """The line the ``simplest`` or ``cheapest`` rule keeps among ``tied_lines``.

    Args:
        tied_lines: the tied lines (from :func:`ties`).
        lines: every line's score.
        rule: ``simplest`` or ``cheapest`` (``person`` asks a person: the ranking's first is
            what this returns, as the person's default).
        changed: how many parameters each line changed (the main line: absent, 0).
        started: the lines in the order they started (the main line first).
    """
    def earliest(name: str) -> int:
        return started.index(name) if name in started else len(started)

    if rule == "simplest":
        return min(tied_lines, key=lambda n: (changed.get(n, 0), earliest(n)))
    if rule == "cheapest":
        return min(tied_lines, key=lambda n: (lines[n].cost_usd, lines[n].cpu_s,
                                               lines[n].wall_s, earliest(n)))
    return tied_lines[0]


def tie_choice(members: Sequence[BranchRecord], tied_lines: Sequence[str],
               lines: dict[str, LineScore]) -> str | None:
    """The line a group of siblings keeps among ``tied_lines``; None: a person chooses.

    ``keep_all`` keeps the main line; ``best`` follows the tie rule (``person``: None); the
    ``person`` selection is a person's choice whatever the rule.
    """
    first = members[0]
    if first.selection == "keep_all":
        return MAIN_LINE
    if first.selection == "person" or first.ties == "person":
        return None
    return break_tie(tied_lines, lines, first.ties, {r.name: len(r.changes) for r in members},
                     [MAIN_LINE, *(r.name for r in members)])


def tie_reason(tied_lines: Sequence[str], kept: str, rule: TieRule, metric: str) -> str:
    """One line on a tie and how it was broken, for events and the report."""
    names = ", ".join(tied_lines)
    how = {"simplest": "the simplest line (fewest parameters changed, then the earliest)",
           "cheapest": "the cheapest line (model cost, then CPU time, then wall time)",
           "person": "a person's choice"}[rule]
    return (f"tie on {metric}: {names} differ within their intervals; {kept} kept as "
            f"{how}")


def _inside(value: float, interval: tuple[float, float] | None) -> bool:
    return interval is not None and interval[0] <= value <= interval[1]


def _level(score: LineScore) -> tuple[bool, float]:
    share = score.checks_passed / score.checks_declared if score.checks_declared else 1.0
    return score.completed, share
