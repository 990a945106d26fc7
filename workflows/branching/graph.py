"""Which tasks a branch runs and which it reuses: the plan's graph around a branch point.

A branch runs its branch-point task and every task downstream of it (transitively), in the
plan's order; every other task is upstream or beside it, and the branch reuses the main line's
results for those it depends on. Deterministic, pure code.
"""

from __future__ import annotations

from workflows.contracts.plan import Plan


def downstream(plan: Plan, order: list[str], task_id: str) -> list[str]:
    """``task_id`` and every task that depends on it, directly or not, in ``order``."""
    decisions, inside = plan.by_id(), {task_id}
    for tid in order:  # ``order`` is topological: a task's dependencies come before it
        if tid not in inside and any(dep in inside for dep in decisions[tid].dependencies):
            inside.add(tid)
    return [tid for tid in order if tid in inside]


def upstream(plan: Plan, tasks: list[str]) -> list[str]:
    """The tasks outside ``tasks`` that some task of ``tasks`` depends on, directly or not."""
    decisions = plan.by_id()
    inside, found, stack = set(tasks), set[str](), list(tasks)
    while stack:
        for dep in decisions[stack.pop()].dependencies:
            if dep not in inside and dep not in found:
                found.add(dep)
                stack.append(dep)
    return sorted(found)
