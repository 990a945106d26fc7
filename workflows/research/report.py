"""How a run ends: the output processor's answer to the goal, the report, the result.

A plan run with a model is answered too: the output processor is asked what the plan's verified
results show (its context and hypotheses are the question). Without a model, the report
writer answers from the verified metrics and checks alone.

The report (results JSON and Markdown) has every task's full result; its timestamp is the
run's start in workflow time, so writing it again (a retried activity or workflow task)
replaces its files. The workflow's result is cut to fit (``workflows.common.sizes``): each
task's status and reason, and the report's paths. A report that cannot be written is
recorded, never fatal: the result still comes back.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.catalogue import SUMMARIZE_RUN, WRITE_REPORT
    from workflows.common.failures import root_message
    from workflows.common.sizes import fit_run, quick_result, task_summary
    from workflows.contracts.branches import BranchTree
    from workflows.contracts.checkpoints import CheckpointList
    from workflows.contracts.gates import GateRecord
    from workflows.contracts.kpis import estimated_seconds
    from workflows.contracts.packing import PACK_FROM
    from workflows.contracts.plan import PRIORITY_RANK, Plan
    from workflows.contracts.results import (
        ResearchResult,
        RunReport,
        RunStatus,
        TaskResult,
        WriteReportInput,
    )
    from workflows.contracts.roles import SummaryRequest
    from workflows.contracts.skills import SkillSummary
    from workflows.contracts.spend import ModelSpend
    from workflows.research.context import study_facts, task_digest, wanted_metrics
    from workflows.research.memory import summarize
    from workflows.research.skills import note_results
    from workflows.research.state import RunState

DIGEST_TAIL, DIGEST_TAIL_MIN, DIGEST_BUDGET = 1500, 200, 200_000
"""Output the output processor sees per task: 1 500 characters, less for a plan so large
that all of them would pass 200 000 (never under 200)."""

QUESTION_CHARS = 4000


def plan_question(name: str, plan: Plan) -> str:
    """What a plan run's answer answers: what its verified results show, given its context."""
    parts = [f"What do the verified results of the plan {name!r} show?"]
    if plan.context:
        parts.append(f"Its context: {plan.context}")
    parts += [f"Hypothesis {h.id}: {h.statement}" for h in plan.hypotheses]
    return "\n".join(parts)[:QUESTION_CHARS]


async def answer_run(state: RunState, agents: AgentCalls, plan: Plan) -> None:
    """The goal's answer; a plan run's too, when a model and a completed task exist."""
    if state.req.goal:
        await answer_goal(state, agents)
    elif agents.enabled and any(t.status == "completed" for t in state.tasks()):
        await answer_goal(state, agents, plan_question(state.req.plan_name, plan))


async def answer_goal(state: RunState, agents: AgentCalls, question: str | None = None) -> None:
    """The output processor's answer to the goal, or to ``question`` (a plan run's).

    Asked only when a model is configured and a task completed.
    """
    tasks = state.tasks()
    if not agents.enabled or not any(t.status == "completed" for t in tasks):
        return
    goal = question or state.req.goal
    assert goal is not None
    state.set_phase("summarize")
    tail = max(DIGEST_TAIL_MIN, min(DIGEST_TAIL, DIGEST_BUDGET // len(tasks)))
    wanted = wanted_metrics(state.plan, state.req.study)
    digests = [task_digest(t, tail=tail, wanted=wanted) for t in tasks]
    study, testing = study_facts(state.req.study, state.plan)
    try:
        answer = await agents.call(
            SUMMARIZE_RUN, SummaryRequest(run_id=state.req.run_id, goal=goal, tasks=digests,
                                         data=state.req.data,
                                         answer_format=state.req.answer_format,
                                         study=study, testing=testing),
            role="output_processor")
    except AgentUnavailable as err:
        state.log.add("agent_call", "error", agent="output_processor", status="no_answer",
                      outputs={"reason": err.reason})
        return
    state.answer = answer.answer


def run_report(state: RunState, started: datetime, *, gates: list[GateRecord],
               model: ModelSpend, branches: BranchTree | None = None,
               checkpoints: CheckpointList | None = None) -> RunReport:
    """The run's report as it stands now, with every task's result."""
    req, now, tasks = state.req, workflow.now(), state.tasks()
    done = sum(t.status == "completed" for t in tasks)
    status: RunStatus = ("completed" if done == len(tasks)
                         else "partial" if done else "failed")
    if all(t.status == "cancelled" for t in tasks):
        status = "rejected"
    if state.plan is None:
        status = "deferred"
    if state.cancelling:
        status = "cancelled"
    if state.broken:
        status = "failed"
    return RunReport(
        run_id=req.run_id, plan_name=req.plan_name, plan_sha256=req.plan_sha256,
        status=status, timestamp=started.strftime("%Y%m%d_%H%M%S"),
        started_at=started, finished_at=now, task_counts=_counts(tasks),
        tasks=[slim_of(state, t) for t in tasks] if len(tasks) > PACK_FROM else tasks,
        completion_by_priority=_completion_by_priority(tasks),
        gates=list(gates), goal=req.goal,
        status_reason=state.reason or _status_reason(status, tasks),
        plan=(state.plan if (req.plan is None and not req.packed_plan) or state.memory.advice
              or state.skill_uses else None),
        answer=state.answer, model=model,
        reflection=summarize(tasks, state.memory),
        skills=_skill_summary(state, tasks),
        supplied_plan=state.supplied_plan, branches=branches,
        checkpoints=checkpoints if checkpoints and checkpoints.checkpoints else None,
        parent=req.parent.run_id if req.parent is not None else "",
        dependencies=({d.task_id: list(d.dependencies) for d in state.plan.decisions}
                      if state.plan is not None else {}),
        priority_scores=({d.task_id: d.priority_score for d in state.plan.decisions
                          if d.priority_score is not None} if state.plan is not None else {}),
        estimated_s=({d.task_id: s for d in state.plan.decisions
                      if (s := estimated_seconds(d.estimated_resources)) is not None}
                     if state.plan is not None else {}),
        execution=workflow.info().run_id,
        first_execution=workflow.info().first_execution_run_id,
    )


def slim_of(state: RunState, task: TaskResult) -> TaskResult:
    """``task`` as a large run's report is given it; made once (``RunState.slim``)."""
    made = state.slim.get(task.task_id)
    if made is not None and made[0] is task:
        return made[1]
    slim = _slim(task)
    state.slim[task.task_id] = (task, slim)
    return slim


def _slim(task: TaskResult) -> TaskResult:
    """A large run's task as its report is given it.

    The writer reads the whole from the file the task wrote (``detail``), so the report's
    input stays a few MB at 10 000 tasks.
    """
    if not task.detail:
        return task
    return quick_result(
        task_id=task.task_id, priority=task.priority, action=task.action, status=task.status,
        status_reason=task.status_reason, detail=task.detail, branch=task.branch,
        attempts_total=task.attempts_total, artifacts_total=task.artifact_count())


def run_result(report: RunReport) -> ResearchResult:
    """The workflow's result: the report without its tasks' detail, cut to fit."""
    return fit_run(ResearchResult(**report.run_fields(),
                                  tasks=[task_summary(t) for t in report.tasks]))


async def write_report(state: RunState, report: RunReport) -> None:
    """Write the results and the report, and record the run's end."""
    log = state.log
    try:
        paths = await WRITE_REPORT.run(WriteReportInput(report=report))
    except (ActivityError, ApplicationError) as err:  # a local activity's failure can
        # arrive as the activity's own ApplicationError; the results still come back in
        # the workflow's result
        log.add("error", "error", status="report_failed",
                outputs={"reason": root_message(err)})
    else:
        report.report = paths
        log.add("file_gen", "complete", status="written", outputs=paths.model_dump())
    log.add("checkpoint", "complete", status=report.status,
            outputs={"tasks": {t.task_id: t.status for t in report.tasks}})
    await log.flush()


def _skill_summary(state: RunState, tasks: list[TaskResult]) -> SkillSummary:
    summary = state.skills.model_copy(deep=True)
    note_results(summary, state.skill_uses, tasks)
    return summary


def _counts(tasks: list[TaskResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.status] = counts.get(t.status, 0) + 1
    return dict(sorted(counts.items()))


def _completion_by_priority(tasks: list[TaskResult]) -> dict[str, dict[str, float]]:
    """Completed / total / rate per priority (the ≥ 70 % HIGH criterion reads this)."""
    table: dict[str, dict[str, float]] = {}
    for priority in sorted({t.priority for t in tasks}, key=PRIORITY_RANK.__getitem__):
        group = [t for t in tasks if t.priority == priority]
        completed = sum(t.status == "completed" for t in group)
        table[priority] = {"total": len(group), "completed": completed,
                           "rate": round(completed / len(group), 4)}
    return table


def _status_reason(status: RunStatus, tasks: list[TaskResult]) -> str:
    """One line on how the run ended, from its tasks' statuses."""
    tally = ", ".join(f"{n} {s}" for s, n in _counts(tasks).items())
    return f"{status}: {tally}" if tally else status
