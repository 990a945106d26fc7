"""The alternatives a plan writes on its tasks (``branches``), checked before a run starts.

A decision's ``branches`` run that task and its downstream beside the main line from the
start, so they are checked with the plan, by the plan intake and again by the run: each must
name itself uniquely, change something it can change (a job the plan writes, a task it
actually runs), and the plan may hold at most ``MAX_BRANCHES`` of them. Deterministic, pure
code.
"""

from __future__ import annotations

from workflows.branching.graph import downstream
from workflows.common.changes import ChangeRefusedError, apply_sets, split_path
from workflows.contracts.alternatives import MAX_BRANCHES, BranchSpec
from workflows.contracts.arguments import check_job_args
from workflows.contracts.base import Scalar
from workflows.contracts.branches import MAIN_LINE
from workflows.contracts.plan import Decision, Plan, PlanError

_AFTER_THE_RUN = ("the coder writes its job when the task runs; write the task's `job` in the "
                  "plan, or branch from the task's execute checkpoint once it ran "
                  "(`assay branch RUN --from {task}:execute ...`)")


def check_explore(plan: Plan, order: list[str]) -> None:
    """Check every decision's ``branches`` against the plan.

    Args:
        plan: the plan, whose graph ``check_graph`` has already accepted.
        order: the plan's execution order (what ``check_graph`` returned).

    Raises:
        PlanError: a name taken twice or reserved, a branch that changes nothing, a change to
            a task outside the branch, to a job the plan does not write (the coder writes it
            at run time) or of the wrong kind, or more branches than a plan may hold. The
            message names the task and the branch.
    """
    total = sum(len(d.branches) for d in plan.decisions)
    if total > MAX_BRANCHES:
        tasks = ", ".join(d.task_id for d in plan.decisions if d.branches)
        raise PlanError(f"the plan explores {total} branches (tasks {tasks}); at most "
                        f"{MAX_BRANCHES} may run from the start: sweep fewer values, or "
                        "branch the rest once the run is open")
    decisions = plan.by_id()
    taken: dict[str, str] = {}
    for decision in (decisions[tid] for tid in order):
        inside = downstream(plan, order, decision.task_id)
        seen: dict[tuple[tuple[str, str, str], ...], str] = {}
        for branch in decision.branches:
            where = f"task {decision.task_id}: branch {branch.name!r}"
            _check_name(branch.name, where, taken, decision.task_id)
            changes = _check_changes(branch, decision, decisions, inside, where)
            if changes in seen:
                raise PlanError(f"{where} makes the same changes as branch {seen[changes]!r}; "
                                "drop one of them")
            seen[changes] = branch.name


def _check_name(name: str, where: str, taken: dict[str, str], task_id: str) -> None:
    """A branch's name is neither the main line's nor another branch's of the plan."""
    if name.casefold() == MAIN_LINE:
        raise PlanError(f"{where}: {MAIN_LINE!r} is the run's own line; name the branch "
                        "otherwise")
    other = taken.get(name.casefold())
    if other is not None:
        raise PlanError(f"{where}: the name is already taken by a branch of task {other}; "
                        "branch names must be unique across the plan")
    taken[name.casefold()] = task_id


def _check_changes(branch: BranchSpec, decision: Decision, decisions: dict[str, Decision],
                   inside: list[str], where: str) -> tuple[tuple[str, str, str], ...]:
    """Check what a branch changes; return its changes, canonical, to compare siblings."""
    if not branch.set and branch.code is None:
        raise PlanError(f"{where} changes nothing (no `set`, no `code`): it would repeat the "
                        "main line")
    if branch.code is not None and decision.job is None:
        raise PlanError(
            f"{where}: `code` replaces the task's job, and the plan gives the task none to "
            "replace (its script, arguments, resources and expected artifacts); "
            + _AFTER_THE_RUN.format(task=decision.task_id))
    grouped: dict[str, dict[str, Scalar]] = {}
    for path, value in branch.set.items():
        task, field = split_path(path, decision.task_id)
        if task not in inside:
            raise PlanError(_outside(where, path, task, decision.task_id, decisions))
        if field in grouped.setdefault(task, {}):
            raise PlanError(f"{where} sets {field} of task {task} twice (as {path!r} and "
                            "without or with its task prefix); keep one")
        grouped[task][field] = value
    for task, sets in grouped.items():
        _check_applies(decisions[task], sets, where)
    code = () if branch.code is None else (("", "code", branch.code),)
    return tuple(sorted((t, f, repr(v)) for t, s in grouped.items() for f, v in s.items())) + code


def _outside(where: str, path: str, task: str, branch_task: str,
             decisions: dict[str, Decision]) -> str:
    """Why ``path`` names a task the branch does not run."""
    if task not in decisions:
        return f"{where}: {path!r} names task {task!r}, which the plan does not have"
    return (f"{where}: {path!r} changes task {task}, which is not downstream of task "
            f"{branch_task}, so the branch does not run it (it reuses the main line's result)")


def _check_applies(decision: Decision, sets: dict[str, Scalar], where: str) -> None:
    """The changes to one task's job can apply: the plan writes that job, values fit."""
    if decision.job is None:
        raise PlanError(f"{where}: cannot set {', '.join(sets)} of task {decision.task_id}: "
                        + _AFTER_THE_RUN.format(task=decision.task_id))
    try:
        changed, _ = apply_sets(decision.job, sets, decision.task_id)
        check_job_args(changed.args)
    except ChangeRefusedError as err:
        detail = str(err).removeprefix(f"task {decision.task_id}: ")
        raise PlanError(f"{where}: cannot set {', '.join(sets)} of task {decision.task_id}: "
                        f"{detail}") from None
    except ValueError as err:  # arguments no program could be started with
        raise PlanError(f"{where}: cannot set {', '.join(sets)} of task {decision.task_id}: "
                        f"{err}") from None
