"""How a run ends: the output processor's answer to the goal, the results, the report.

The results JSON and Markdown report are written once, with a single timestamp taken from
workflow time. A report that cannot be written is recorded, never fatal: the results still
come back as the workflow's result.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.roles import SummaryRequest, TaskDigest
    from workflows.agents.spend import ModelSpend
    from workflows.catalogue import SUMMARIZE_RUN, WRITE_REPORT
    from workflows.common.failures import root_message
    from workflows.contracts.executive import GateRecord
    from workflows.contracts.plan import PRIORITY_RANK
    from workflows.contracts.results import ResearchResult, RunStatus, TaskResult, WriteReportInput
    from workflows.library.contracts import SkillSummary
    from workflows.research.memory import summarize
    from workflows.research.skills import note_results
    from workflows.research.state import RunState


async def answer_goal(state: RunState, agents: AgentCalls) -> None:
    """The output processor's answer to the goal, when a model and a completed task exist."""
    tasks = state.tasks()
    if not agents.enabled or not any(t.status == "completed" for t in tasks):
        return
    goal = state.req.goal
    assert goal is not None
    state.set_phase("summarize")
    digests = [TaskDigest(
        task_id=t.task_id, action=t.action, status=t.status, status_reason=t.status_reason,
        metrics=t.metrics, checks=[f"{c.check.describe()}: {'pass' if c.passed else 'fail'}"
                                   for c in t.checks],
        artifacts=[a.name for a in t.artifacts],
        stdout_tail=t.execution.stdout_tail[-1500:] if t.execution else "")
        for t in tasks]
    try:
        answer = await agents.call(
            SUMMARIZE_RUN, SummaryRequest(run_id=state.req.run_id, goal=goal, tasks=digests),
            role="output_processor")
    except AgentUnavailable as err:
        state.log.add("agent_call", "error", agent="output_processor", status="no_answer",
                      outputs={"reason": err.reason})
        return
    state.answer = answer.answer


def run_result(state: RunState, started: datetime, *, gates: list[GateRecord],
               model: ModelSpend) -> ResearchResult:
    """The run's results as they stand now (its report is written from them)."""
    req, now, tasks = state.req, workflow.now(), state.tasks()
    done = sum(t.status == "completed" for t in tasks)
    status: RunStatus = ("completed" if done == len(tasks)
                         else "partial" if done else "failed")
    if all(t.status == "cancelled" for t in tasks):
        status = "rejected"
    if state.plan is None:
        status = "deferred"
    return ResearchResult(
        run_id=req.run_id, plan_name=req.plan_name, plan_sha256=req.plan_sha256,
        status=status, timestamp=now.strftime("%Y%m%d_%H%M%S"),
        started_at=started, finished_at=now, tasks=tasks,
        completion_by_priority=_completion_by_priority(tasks),
        gates=list(gates), goal=req.goal,
        status_reason=state.reason or _status_reason(status, tasks),
        plan=(state.plan if req.plan is None or state.memory.advice or state.skill_uses
              else None),
        answer=state.answer, model=model,
        reflection=summarize(tasks, state.memory),
        skills=_skill_summary(state, tasks),
    )


async def write_report(state: RunState, result: ResearchResult) -> None:
    """Write the results and the report, and record the run's end."""
    log = state.log
    try:
        report = await WRITE_REPORT.run(WriteReportInput(result=result))
    except (ActivityError, ApplicationError) as err:  # a local activity's failure can
        # arrive as the activity's own ApplicationError; the results still come back in
        # the workflow's result
        log.add("error", "error", status="report_failed",
                outputs={"reason": root_message(err)})
    else:
        result.report = report
        log.add("file_gen", "complete", status="written", outputs=report.model_dump())
    log.add("checkpoint", "complete", status=result.status,
            outputs={"tasks": {t.task_id: t.status for t in result.tasks}})
    await log.flush()


def _skill_summary(state: RunState, tasks: list[TaskResult]) -> SkillSummary:
    summary = state.skills.model_copy(deep=True)
    note_results(summary, state.skill_uses, tasks)
    return summary


def _completion_by_priority(tasks: list[TaskResult]) -> dict[str, dict[str, float]]:
    """Completed / total / rate per priority (the seed's ≥ 70 % HIGH criterion reads this)."""
    table: dict[str, dict[str, float]] = {}
    for priority in sorted({t.priority for t in tasks}, key=PRIORITY_RANK.__getitem__):
        group = [t for t in tasks if t.priority == priority]
        completed = sum(t.status == "completed" for t in group)
        table[priority] = {"total": len(group), "completed": completed,
                           "rate": round(completed / len(group), 4)}
    return table


def _status_reason(status: RunStatus, tasks: list[TaskResult]) -> str:
    """One line on how the run ended, from its tasks' statuses."""
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.status] = counts.get(t.status, 0) + 1
    tally = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return f"{status}: {tally}" if tally else status
