"""A branch request checked against the run, and turned into the branches' inputs.

Who may branch (the policy's ``branching.approvers``), from where (a task of the plan at a
checkpoint it has reached: upstream completed for ``planned``, a job it ran for ``execute``, a
succeeded execution for ``verify``; never a cancelled or blocked task; and only once every
task it reuses has finished, ``unfinished`` says which have not), under which names
(unique in the run, ``main`` reserved), compared on which metric (never a held-out one unless
allowed: ``workflows.branching.selection``) and with which changes (each applying to a task of
the branch, within the guardrails). Everything is checked before anything starts: a request is
refused whole, with every reason. Deterministic, pure code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workflows.branching.graph import downstream, upstream
from workflows.branching.selection import held_out_problem
from workflows.common.changes import ChangeRefusedError, by_task, modified
from workflows.constants import branch_workflow_id, digest
from workflows.contracts.alternatives import BranchSpec, Metric
from workflows.contracts.branches import (
    MAIN_LINE,
    MAX_RUN_BRANCHES,
    BranchChange,
    BranchRecord,
    BranchRequest,
    TaskStart,
)
from workflows.contracts.plan import Decision, JobSpec, Plan
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import TaskResult

UNSTARTED = ("pending", "running")


class BranchRefusedError(ValueError):
    """A branch request the run cannot take; the message says every reason."""


@dataclass
class RunView:
    """What the run knows that a request is checked against."""

    run_id: str
    plan: Plan
    order: list[str]
    results: dict[str, TaskResult]
    names: set[str] = field(default_factory=set[str])
    """Branch names the run already has."""
    groups: int = 0
    """Sibling groups the run already has (the next one is numbered after them)."""


@dataclass
class Planned:
    """One branch of a request, ready to start."""

    record: BranchRecord
    plan: Plan
    order: list[str]
    reused: list[TaskResult]
    start: TaskStart | None


def plan_request(req: BranchRequest, view: RunView, policy: RunPolicy) -> list[Planned]:
    """The branches ``req`` asks for, each checked and changed.

    Raises:
        BranchRefusedError: anything about the request is wrong (every reason is given).
    """
    problems = _who_and_names(req, view, policy)
    decisions = view.plan.by_id()
    if req.from_task not in decisions:
        known = ", ".join(view.order[:20])
        raise BranchRefusedError("; ".join([*problems, f"unknown task {req.from_task!r} "
                                            f"(the plan's tasks: {known})"]))
    problems.extend(_checkpoint(req, view))
    waiting = unfinished(req, view)
    if waiting:
        problems.append(f"the branch reuses tasks {', '.join(waiting)}, which have not "
                        "finished: ask again once they have")
    if problems:
        raise BranchRefusedError("; ".join(problems))
    tasks = downstream(view.plan, view.order, req.from_task)
    reused = [view.results[t] for t in upstream(view.plan, tasks)]
    metric = (req.metric or decisions[req.from_task].metric or view.plan.metric
              or policy.branching.metric)
    allowed = req.allow_test_selection or policy.branching.allow_test_selection
    held = held_out_problem(metric, view.plan.held_out, "branch selection")
    if held and not allowed:
        raise BranchRefusedError(held)
    group = f"{req.from_task}:{req.from_phase}#{view.groups + 1}"
    planned: list[Planned] = []
    for spec in req.branches:
        try:
            planned.append(_one(spec, req, view, tasks, reused, group, metric, policy))
        except ChangeRefusedError as err:
            problems.append(f"branch {spec.name}: {err}")
    if problems:
        raise BranchRefusedError("; ".join(problems))
    return planned


def unfinished(req: BranchRequest, view: RunView) -> list[str]:
    """The tasks a branch from ``req.from_task`` reuses that have no result yet.

    A branch reuses every task upstream of the tasks it runs, its branch point's siblings
    included (a task beside it that a task downstream of it depends on): until each has
    finished, the branch cannot start. A task the plan does not have waits for nothing.
    """
    if req.from_task not in view.plan.by_id():
        return []
    tasks = downstream(view.plan, view.order, req.from_task)
    return [t for t in upstream(view.plan, tasks) if t not in view.results]


def _who_and_names(req: BranchRequest, view: RunView, policy: RunPolicy) -> list[str]:
    problems: list[str] = []
    allowed = policy.branching.approvers
    if allowed and req.by not in allowed:
        problems.append(f"{req.by!r} may not branch this run (allowed: {', '.join(allowed)})")
    names = [b.name for b in req.branches]
    clashes = sorted({n for n in names if names.count(n) > 1 or n in view.names})
    if clashes:
        problems.append(f"branch names already taken: {', '.join(clashes)}")
    if MAIN_LINE in names:
        problems.append(f"{MAIN_LINE!r} is the run's own line, not a branch name")
    if len(view.names) + len(names) > MAX_RUN_BRANCHES:
        problems.append(f"a run holds at most {MAX_RUN_BRANCHES} branches; it has "
                        f"{len(view.names)} and this asks for {len(names)} more")
    return problems


def _checkpoint(req: BranchRequest, view: RunView) -> list[str]:
    """Why the checkpoint cannot be branched from yet, or at all (empty: it can)."""
    tid, phase = req.from_task, req.from_phase
    result = view.results.get(tid)
    if result is not None and result.status in ("cancelled", "blocked"):
        return [f"task {tid} ended {result.status}: it has no checkpoint to branch from"]
    if phase == "planned":
        deps = view.plan.by_id()[tid].dependencies
        waiting = [d for d in deps if d not in view.results
                   or view.results[d].status != "completed"]
        return ([f"task {tid} cannot branch from planned yet: its dependencies "
                 f"{', '.join(waiting)} have not completed"] if waiting else [])
    if result is None:
        return [f"task {tid} has not finished: branch from its {phase} checkpoint once it has "
                f"(or from planned)"]
    if result.job is None:
        return [f"task {tid} kept no job to branch from at {phase} (it never had one, or it "
                "was too large to keep): branch from planned"]
    if phase == "verify" and (result.execution is None
                              or result.execution.outcome != "succeeded"):
        return [f"task {tid}'s job did not run to success, so there is no execution to "
                "verify again: branch from execute"]
    return []


def _one(spec: BranchSpec, req: BranchRequest, view: RunView, tasks: list[str],
         reused: list[TaskResult], group: str, metric: Metric | None,
         policy: RunPolicy) -> Planned:
    decisions = view.plan.by_id()
    sets = by_task(spec.set, req.from_task)
    outside = sorted(set(sets) - set(tasks))
    if outside:
        raise ChangeRefusedError(f"changes target tasks {', '.join(outside)}, which are not "
                                 f"{req.from_task} or downstream of it")
    if req.from_phase == "verify" and (req.from_task in sets or spec.code is not None):
        raise ChangeRefusedError(f"at task {req.from_task}'s verify checkpoint its execution "
                                 "is reused, so its job cannot change: branch from execute")
    changes: list[BranchChange] = []
    changed: dict[str, Decision] = {}
    start: TaskStart | None = None
    for tid in tasks:
        decision = decisions[tid]
        point = tid == req.from_task
        base = view.results[tid].job if point and req.from_phase != "planned" else decision.job
        job, made = modified(base, sets.get(tid, {}), spec.code if point else None,
                             task_id=tid, name=spec.name, policy=policy.review)
        changes.extend(made)
        if point and req.from_phase != "planned":
            start = _start(spec, req, view, job)
            changed[tid] = decision.model_copy(update={"branches": []})
        else:
            changed[tid] = decision.model_copy(update={"job": job, "branches": []})
    record = BranchRecord(
        name=spec.name, kind=spec.kind, hypothesis=spec.hypothesis, from_task=req.from_task,
        from_phase=req.from_phase, checkpoint=req.from_checkpoint or "", group=group,
        by=req.by, comment=req.comment,
        channel=req.channel or "temporal", changes=changes,
        code_sha256=digest(spec.code.encode()) if spec.code else "",
        workflow_id=branch_workflow_id(view.run_id, spec.name),
        tasks=dict.fromkeys(tasks, "pending"), reused=[r.task_id for r in reused],
        metric=metric, selection=req.selection or policy.branching.selection,
        ties=policy.branching.ties, held_out_allowed=bool(
            held_out_problem(metric, view.plan.held_out, "branch selection")))
    sub = view.plan.model_copy(update={"decisions": [changed[t] for t in tasks]})
    return Planned(record=record, plan=sub, order=tasks, reused=reused, start=start)


def _start(spec: BranchSpec, req: BranchRequest, view: RunView,
           job: JobSpec | None) -> TaskStart:
    result = view.results[req.from_task]
    outcome = None
    if req.from_phase == "verify" and result.execution is not None:
        outcome = result.execution.model_copy(update={"artifacts": result.artifacts,
                                                      "metrics": result.metrics})
    return TaskStart(branch=spec.name, phase=req.from_phase, job=job, outcome=outcome,
                     by=req.by)
