"""A run's use of the skill library at intake, and what it did for the report.

A goal is shown to the library before any planning call: a confident match (preconditions
hold, parameters filled and in range, confidence at or above the policy's) becomes the run's
plan — one task, ``skill-1``, running the pattern's job — and the planner is never asked. A
plan's tasks that have no job are shown too, and a match supplies the job. Asking is bounded
by the reflection timeout; a library that is slow or down is a recorded miss and the run
plans as it would without one.

When nothing in a non-empty library is similar enough and the run has a model, the skill
writer reformulates the goal or action once (``reformulate_query``) and the library is asked
again with the new words; a reformulation that fails is a
recorded miss and the first answer stands.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.catalogue import MATCH_SKILLS, REFORMULATE_QUERY
    from workflows.common.advisory import Missed, advise
    from workflows.common.events import EventLog
    from workflows.contracts.plan import Decision, InputFile, Plan
    from workflows.contracts.results import ResearchInput, TaskResult
    from workflows.library.contracts import (
        MatchAnswer,
        MatchInput,
        MatchTask,
        SkillApplication,
        SkillSummary,
        SkillUse,
    )
    from workflows.library.writing import ReformulateRequest
    from workflows.research.state import RunState

GOAL_KEY = "goal"
"""The key of a goal's answer in ``MatchAnswer`` (a task's is its id)."""
MAX_REFORMULATED = 10
"""Queries one match reformulates (the goal, or as many jobless tasks)."""

async def plan_from_skill(state: RunState, agents: AgentCalls | None = None) -> Plan | None:
    """The plan a confident skill match supplies for the goal, with no planning call."""
    state.set_phase("match")
    answer = await match(state.req, None, state.skills, state.log, agents)
    found = goal_plan(state.req, answer) if answer is not None else None
    if found is None:
        return None
    plan, uses = found
    state.skill_uses.update(uses)
    state.from_skill = True
    state.log.add("checkpoint", "info", agent="skills", status="plan_from_skill",
                  outputs={t: u.rationale for t, u in uses.items()})
    return plan


async def supply_jobs(state: RunState, plan: Plan, agents: AgentCalls | None = None) -> Plan:
    """The plan with jobs from matched skills for its jobless tasks (kept as the run's plan)."""
    answer = await match(state.req, plan, state.skills, state.log, agents)
    if answer is None:
        return plan
    plan, uses = with_jobs(plan, answer)
    if uses:
        state.skill_uses.update(uses)
        state.plan = plan
    return plan


def replan_needed(state: RunState, *, can_plan: bool) -> bool:
    """Whether a skill-supplied plan failed its promise, so the goal is planned afresh.

    A deviation with no model to plan instead is kept as a warning; one to plan around is
    recorded as the run's fallback.
    """
    if not (state.from_skill and state.req.goal):
        return False
    why = major_deviation(state.skill_uses, state.results)
    if not why:
        return False
    if not can_plan:
        state.skills.warnings.append(f"{why}; no model is configured to plan instead")
        return False
    state.skills.fell_back = why
    state.log.add("checkpoint", "info", agent="skills", status="skill_fallback",
                  outputs={"reason": why})
    return True


async def match(req: ResearchInput, plan: Plan | None, summary: SkillSummary,
                log: EventLog, agents: AgentCalls | None = None) -> MatchAnswer | None:
    """The library's answer for the goal (``plan`` None) or the plan's jobless tasks.

    With ``agents`` enabled, what matched nothing is reformulated and matched once more.
    """
    tasks = [] if plan is None else [
        MatchTask(task_id=d.task_id, action=d.action, has_job=d.job is not None,
                  input_names=list(d.inputs),
                  checked_metrics=sorted({c.metric for c in d.checks}))
        for d in plan.decisions]
    if plan is not None and all(t.has_job for t in tasks):
        return None
    ask = MatchInput(run_id=req.run_id, goal=req.goal if plan is None else None,
                     data_names=[d.name for d in req.data], tasks=tasks,
                     data_heads={d.name: d.head[:2000] for d in req.data if d.head},
                     policy=req.policy.skills)
    answer = await advise(MATCH_SKILLS, ask, queues=req.queues,
                          limit_s=req.policy.reflection_timeout_s, log=log, agent="skills")
    if isinstance(answer, Missed):
        summary.misses += 1
        summary.warnings.append(f"the skill library was not consulted ({answer.reason})")
        return None
    if agents is not None and agents.enabled and answer.unmatched:
        answer = await reformulated(ask, answer, summary, agents, req)
    summary.retrieved.update(answer.retrieved)
    summary.reasons.update(answer.reasons)
    summary.guidelines.update(answer.guidelines)
    log.add("agent_call", "complete", agent="skills", status="matched",
            outputs={"applied": {a.task_id: a.use.rationale for a in answer.applications},
                     "reasons": answer.reasons,
                     "guidelines": {k: [g.skill_id for g in v]
                                    for k, v in answer.guidelines.items()},
                     "retrieved": {k: [r.skill_id for r in v][:10]
                                   for k, v in answer.retrieved.items()}})
    return answer


async def reformulated(ask: MatchInput, answer: MatchAnswer, summary: SkillSummary,
                       agents: AgentCalls, req: ResearchInput) -> MatchAnswer:
    """``answer`` with what matched nothing matched again in the skill writer's words."""
    texts = ({GOAL_KEY: (ask.goal, ask.data_names)} if ask.goal else {}) | {
        t.task_id: (t.action, t.input_names) for t in ask.tasks}
    queries: dict[str, str] = {}
    for key in answer.unmatched[:MAX_REFORMULATED]:
        text, data = texts.get(key, ("", []))
        if not text:
            continue
        try:
            got = await agents.call(REFORMULATE_QUERY, ReformulateRequest(
                run_id=req.run_id, text=text[:4000], data_names=data[:32]),
                role="query_reformulator")
        except AgentUnavailable as err:
            summary.misses += 1
            summary.warnings.append(f"the query for {key} was not reformulated ({err.reason})")
            continue
        queries[key] = got.query
    if not queries:
        return answer
    again = ask.model_copy(update={
        "goal": queries.get(GOAL_KEY),
        "tasks": [t.model_copy(update={"action": queries[t.task_id]})
                  for t in ask.tasks if t.task_id in queries]})
    second = await advise(MATCH_SKILLS, again, queues=req.queues,
                          limit_s=req.policy.reflection_timeout_s, log=agents.log,
                          agent="skills")
    if isinstance(second, Missed):
        summary.misses += 1
        summary.warnings.append(f"the reformulated queries were not matched ({second.reason})")
        return answer
    agents.log.add("agent_call", "complete", agent="skills", status="reformulated",
                   outputs={"queries": queries,
                            "applied": [a.task_id for a in second.applications]})
    return merged_answer(answer, second, list(queries))


def merged_answer(first: MatchAnswer, second: MatchAnswer, asked: list[str]) -> MatchAnswer:
    """The first match's answer with the second's, for the keys ``asked`` again, added."""
    merged = first.model_copy(deep=True)
    merged.applications.extend(second.applications)
    merged.retrieved.update(second.retrieved)
    merged.guidelines.update(second.guidelines)
    for key in asked:
        merged.reasons.pop(key, None)
    merged.reasons.update(second.reasons)
    merged.unmatched = [k for k in first.unmatched if k not in asked] + second.unmatched
    return merged


def goal_plan(req: ResearchInput, answer: MatchAnswer) -> tuple[Plan, dict[str, SkillUse]] | None:
    """The plan a matched skill supplies for a goal: one task running its job."""
    if not answer.applications:
        return None
    app = answer.applications[0]
    files = {d.name: d for d in req.data}
    decision = Decision(
        task_id=app.task_id, priority="HIGH", action=app.action or app.use.name,
        acceptance_criteria=app.acceptance_criteria or [
            f"the job of skill {app.use.skill_id} completes with its expected outputs"],
        rationale=f"from {app.use.rationale}; no planning call", job=app.job,
        checks=app.checks, inputs=[n for n in app.inputs if n in files],
        resolved_inputs=[InputFile(name=f.name, path=f.path, sha256=f.sha256, size=f.size)
                         for f in (files[n] for n in app.inputs if n in files)])
    plan = Plan(meeting_id=req.plan_name, context=f"plan supplied by skill {app.use.skill_id}",
                decisions=[decision])
    return plan, {decision.task_id: app.use}


def with_jobs(plan: Plan, answer: MatchAnswer) -> tuple[Plan, dict[str, SkillUse]]:
    """The plan with the jobs matched skills supply to its jobless tasks."""
    apps: dict[str, SkillApplication] = {a.task_id: a for a in answer.applications}
    if not apps:
        return plan, {}
    decisions: list[Decision] = []
    for d in plan.decisions:
        app = apps.get(d.task_id)
        if app is None or d.job is not None:
            decisions.append(d)
            continue
        why = f"job from {app.use.rationale}"
        decisions.append(d.model_copy(update={
            "job": app.job, "checks": d.checks or app.checks,
            "rationale": f"{d.rationale} | {why}" if d.rationale else why}))
    uses = {tid: a.use for tid, a in apps.items()}
    return plan.model_copy(update={"decisions": decisions}), uses


def note_results(summary: SkillSummary, uses: dict[str, SkillUse],
                 results: list[TaskResult]) -> None:
    """Fold the tasks' skill reports into the run's summary."""
    for task in results:
        use = uses.get(task.task_id)
        if use is not None:
            summary.applied[task.task_id] = use.skill_id
        if task.provenance.guidelines:
            summary.guided[task.task_id] = list(task.provenance.guidelines)
        report = task.skill_report
        if report is None:
            continue
        if report.reported:
            summary.reported += 1
        if report.miss:
            summary.misses += 1
            if len(summary.warnings) < 100:
                summary.warnings.append(f"task {task.task_id}: {report.miss}")
        if use is not None:
            summary.deviations[task.task_id] = report.deviation


def major_deviation(uses: dict[str, SkillUse], results: dict[str, TaskResult]) -> str:
    """Why a skill-supplied plan failed its promise (empty when it kept it)."""
    for tid in sorted(uses):
        result = results.get(tid)
        report = result.skill_report if result is not None else None
        if result is not None and result.status != "completed":
            detail = report.detail if report and report.detail else f"ended {result.status}"
            return f"task {tid} from skill {uses[tid].skill_id}: {detail}"
    return ""
