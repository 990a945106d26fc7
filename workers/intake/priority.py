"""``assign_priority``: a task's priority scored from the plan's DAG and its fields.

A plan's explicit ``priority`` always wins; a task without one is scored at intake
(:func:`with_priorities`) and keeps its score and reasons in ``Decision.priority_score``:

- on the critical path, +30: a longest dependency chain *by task count* (estimates are too
  often absent to weigh by duration), when that chain has two tasks or more;
- deadline within 2 days (``(deadline - now).days <= 2``, an overdue one too), +25;
- feeds a go/no-go decision, +20: it names a hypothesis, or a task that does depends on it;
- an external dependency, +15: input files, or an earlier cycle's artifacts (``reuse``);
- a retry from a previous cycle, +10: carried from one (``context.retry_of``).

HIGH from 50 points, MEDIUM from 25, LOW below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from workflows.contracts.plan import Decision, Plan, Priority, PriorityScore, check_graph

CRITICAL_PATH, DEADLINE, GO_NO_GO, EXTERNAL, RETRY = 30, 25, 20, 15, 10
HIGH_FROM, MEDIUM_FROM = 50, 25
DEADLINE_DAYS = 2
RETRY_KEYS = ("retry_of", "carried_from")
"""``context`` keys that mark a task as carried from a previous cycle."""


def level(score: int) -> Priority:
    """The priority ``score`` points make: HIGH ≥ 50, MEDIUM ≥ 25, else LOW."""
    return "HIGH" if score >= HIGH_FROM else "MEDIUM" if score >= MEDIUM_FROM else "LOW"


def critical_path(plan: Plan) -> set[str]:
    """The tasks on a longest dependency chain (by task count), if it has two or more.

    Raises:
        PlanError: the plan's graph is not valid (``check_graph``).
    """
    order = check_graph(plan)
    tasks = plan.by_id()
    before: dict[str, int] = {}
    for tid in order:
        before[tid] = 1 + max((before[d] for d in tasks[tid].dependencies), default=0)
    after: dict[str, int] = dict.fromkeys(order, 1)
    for tid in reversed(order):
        for dep in tasks[tid].dependencies:
            after[dep] = max(after[dep], after[tid] + 1)
    length = max(before.values())
    if length < 2:
        return set()
    return {t for t in order if before[t] + after[t] - 1 == length}


def feeds_decision(plan: Plan) -> set[str]:
    """Tasks whose results reach a go/no-go decision: a hypothesis's task and its upstream."""
    tasks = plan.by_id()
    found: set[str] = set()
    todo = [d.task_id for d in plan.decisions if d.hypothesis is not None]
    while todo:
        tid = todo.pop()
        if tid not in found:
            found.add(tid)
            todo += tasks[tid].dependencies
    return found


def score_task(decision: Decision, *, critical: bool, feeds: bool, now: datetime,
               carried: bool = False) -> PriorityScore:
    """``assign_priority`` for one task, with the reason for each point."""
    points: list[tuple[int, str]] = []
    if critical:
        points.append((CRITICAL_PATH, "on the critical path (longest chain by task count)"))
    if decision.deadline is not None:
        days = (_aware(decision.deadline) - _aware(now)).days
        if days <= DEADLINE_DAYS:
            points.append((DEADLINE, f"deadline in {days} day(s) (≤ {DEADLINE_DAYS})"))
    if feeds:
        points.append((GO_NO_GO, "feeds a go/no-go decision (a hypothesis)"))
    if decision.inputs or decision.reuse:
        points.append((EXTERNAL, "external dependency (input files or earlier cycles)"))
    if carried or _marked_retry(decision.context):
        points.append((RETRY, "retry from a previous cycle"))
    score = sum(p for p, _ in points)
    return PriorityScore(score=score, level=level(score),
                         reasons=[f"+{p} {why}" for p, why in points])


def score_plan(plan: Plan, *, now: datetime,
               carried: frozenset[str] = frozenset()) -> dict[str, PriorityScore]:
    """Every task's score, by task id (``carried``: ids carried from a previous cycle)."""
    critical, feeds = critical_path(plan), feeds_decision(plan)
    return {d.task_id: score_task(d, critical=d.task_id in critical, feeds=d.task_id in feeds,
                                  now=now, carried=d.task_id in carried)
            for d in plan.decisions}


def with_priorities(plan: Plan, unset: set[str], *, now: datetime) -> Plan:
    """``plan`` with the tasks in ``unset`` (no priority in the file) given their score's level."""
    if not unset:
        return plan
    scores = score_plan(plan, now=now)
    decisions = [d.model_copy(update={"priority": scores[d.task_id].level,
                                      "priority_score": scores[d.task_id]})
                 if d.task_id in unset else d for d in plan.decisions]
    return plan.model_copy(update={"decisions": decisions})


def _marked_retry(context: dict[str, Any] | None) -> bool:
    return bool(context) and any(context.get(key) for key in RETRY_KEYS)  # type: ignore[union-attr]


def _aware(moment: datetime) -> datetime:
    """A naive time is taken as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
