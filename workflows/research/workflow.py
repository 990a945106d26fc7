"""ResearchWorkflow: one run of a plan, from intake to report.

Tasks run as child TaskWorkflows in Kahn order (higher priority first among ready tasks), up to
``policy.max_parallel`` at a time. A task whose dependency did not complete ends ``blocked``
with the blocker named. The results JSON and Markdown report are written once, with a single
timestamp taken from workflow time.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable, budget_for
    from workflows.agents.roles import (
        SUMMARIZE_RUN,
        RunAnswer,
        SummaryAnswer,
        SummaryRequest,
        TaskDigest,
    )
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper, GateRefusedError
    from workflows.constants import KIND_KEY, PHASE_KEY, PLAN_KEY, STATUS_KEY, task_workflow_id
    from workflows.contracts.execution import DependencyArtifact, TaskStatus
    from workflows.contracts.executive import GateDecision, GateRecord
    from workflows.contracts.memory import MEMORY_PATCH
    from workflows.contracts.plan import PRIORITY_RANK, Decision, Plan, PlanError, check_graph
    from workflows.contracts.results import (
        ReportPaths,
        ResearchInput,
        ResearchResult,
        RunProgress,
        RunStatus,
        SuppliedPlan,
        TaskInput,
        TaskResult,
        WriteReportInput,
    )
    from workflows.library.patterns import SKILLS_PATCH, SkillSummary, SkillUse
    from workflows.research.memory import MemoryAdvice, consult_memory, summarize
    from workflows.research.planning import RunPlanning
    from workflows.research.skills import goal_plan, major_deviation, match, note_results, with_jobs
    from workflows.task.workflow import TaskWorkflow


REPORT_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=30), maximum_attempts=5,
                           non_retryable_error_types=["ReportUnwritable"])


@workflow.defn
class ResearchWorkflow(RunPlanning):
    """Plans a goal or validates a plan, runs its tasks as child workflows, writes the report."""

    @workflow.init
    def __init__(self, req: ResearchInput) -> None:
        super().__init__()
        self._phase = "intake"
        self._status: RunStatus = "running"
        self._order: list[str] = []
        self._states: dict[str, TaskStatus] = {}
        self._results: dict[str, TaskResult] = {}
        self._running: set[str] = set()
        self.log = EventLog(req.run_id, "run")
        self.gates = GateKeeper(req.policy.gates, self.log)
        self.agents = AgentCalls(req.policy.agents, req.queues.agents, self.log,
                                 budget_for(req.policy.agents))
        self._plan: Plan | None = req.plan
        self._reason = ""
        self._answer: RunAnswer | None = None
        self._memory = MemoryAdvice()
        self._skills = SkillSummary()
        self._skill_uses: dict[str, SkillUse] = {}
        self._skills_on = False
        self._from_skill = False

    @workflow.query
    def progress(self) -> RunProgress:
        """Run phase, the status of every task and the plan gate if it is waiting."""
        return RunProgress(run_id=workflow.info().workflow_id, phase=self._phase,
                           status=self._status, tasks=dict(self._states), order=self._order,
                           waiting=self.gates.waiting)

    @workflow.query
    def gates_list(self) -> list[GateRecord]:
        """The run's own gates (the plan gate); task gates live on the task workflows."""
        return list(self.gates.records)

    @workflow.signal(name="approve")
    async def approve(self, payload: Any) -> None:
        """Decide the plan gate, or pass a task's decision on to that task's workflow.

        The payload is taken as raw JSON so a malformed one is refused and recorded.
        """
        decision = self.gates.parse(payload)
        if decision is None:
            return
        if decision.task_id is None:
            with contextlib.suppress(GateRefusedError):
                self.gates.offer(decision)
            return
        if decision.task_id not in self._running:
            self.gates.refuse(decision, f"task {decision.task_id!r} is not running in this run")
            return
        child = workflow.get_external_workflow_handle(
            task_workflow_id(workflow.info().workflow_id, decision.task_id))
        try:
            await child.signal("approve", decision)
        except ApplicationError as err:  # the task ended meanwhile
            self.gates.refuse(decision, f"task {decision.task_id!r}: {err}")

    @workflow.update(name="supply_plan")
    def supply_plan(self, supplied: SuppliedPlan) -> RunProgress:
        """A person's plan for a goal run that waits for one (``assay plan RUN FILE``)."""
        self._take_supplied(supplied)
        return self.progress()

    @supply_plan.validator
    def _check_plan(self, supplied: SuppliedPlan) -> None:
        self._check_supplied(supplied)

    @workflow.update(name="decide")
    def decide(self, decision: GateDecision) -> GateRecord:
        """Decide the plan gate and answer with it (task gates: update the task workflow)."""
        return self.gates.offer(decision)

    @decide.validator
    def _check_decision(self, decision: GateDecision) -> None:
        if decision.task_id is not None:
            raise GateRefusedError(
                "task gates are decided on the task's workflow "
                f"{task_workflow_id(workflow.info().workflow_id, decision.task_id)}")
        self.gates.validate(decision)

    @workflow.run
    async def run(self, req: ResearchInput) -> ResearchResult:
        """Run the plan and return the results JSON of its report."""
        started = workflow.now()
        upsert_keywords(**{KIND_KEY.name: "run", PLAN_KEY.name: req.plan_name,
                           STATUS_KEY.name: "running"})
        log = self.log
        if req.plan is None and not req.goal:
            raise ApplicationError("a run needs a plan or a goal", type="InvalidPlan",
                                   non_retryable=True)
        log.add("checkpoint", "start", status="running",
                inputs={"plan": req.plan_name, "plan_sha256": req.plan_sha256,
                        "goal": req.goal, "data": [d.name for d in req.data]})
        self._skills_on = req.policy.skills.enabled and workflow.patched(SKILLS_PATCH)
        if self._plan is None and self._skills_on:
            self._plan = await self._plan_from_skill(req)
        if self._plan is None:
            self._set_phase("plan")
            self._plan, self._reason = await self._plan_goal(req)
        if self._plan is not None:
            await self._run_plan(req, self._plan, log)
            await self._fall_back_if_deviated(req, log)
        self._set_phase("report")
        result = self._result(req, started)
        try:
            report = await workflow.execute_local_activity(
                "write_report", WriteReportInput(result=result), result_type=ReportPaths,
                start_to_close_timeout=timedelta(minutes=2), retry_policy=REPORT_RETRY)
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
        self._status = result.status
        upsert_keywords(**{STATUS_KEY.name: result.status})
        self._set_phase("done")
        return result

    async def _plan_from_skill(self, req: ResearchInput) -> Plan | None:
        """The plan a confident skill match supplies for the goal, with no planning call."""
        self._set_phase("match")
        answer = await match(req, None, self._skills, self.log)
        found = goal_plan(req, answer) if answer is not None else None
        if found is None:
            return None
        plan, uses = found
        self._skill_uses.update(uses)
        self._from_skill = True
        self.log.add("checkpoint", "info", agent="skills", status="plan_from_skill",
                     outputs={t: u.rationale for t, u in uses.items()})
        return plan

    async def _fall_back_if_deviated(self, req: ResearchInput, log: EventLog) -> None:
        """A skill plan that failed its promise: plan the goal as if there were no skill."""
        if not (self._from_skill and req.goal):
            return
        why = major_deviation(self._skill_uses, self._results)
        if not why:
            return
        if not self.agents.enabled:
            self._skills.warnings.append(f"{why}; no model is configured to plan instead")
            return
        self._skills.fell_back = why
        log.add("checkpoint", "info", agent="skills", status="skill_fallback",
                outputs={"reason": why})
        self._set_phase("plan")
        plan, reason = await self._plan_goal(req)
        if plan is None:
            self._skills.warnings.append(f"planning after the skill's deviation failed: {reason}")
            return
        clash = sorted(d.task_id for d in plan.decisions if d.task_id in self._results)
        if clash:
            self._skills.warnings.append(f"the fallback plan reuses task ids {clash}; not run")
            return
        self._plan = plan
        await self._run_plan(req, plan, log)

    async def _run_plan(self, req: ResearchInput, plan: Plan, log: EventLog) -> None:
        try:
            order = check_graph(plan)
        except PlanError as err:
            raise ApplicationError(f"invalid plan: {err}", type="InvalidPlan",
                                   non_retryable=True) from err
        self._order = [*self._order, *order]
        self._states.update({tid: "pending" for tid in order})
        if self._skills_on and not self._from_skill:
            answer = await match(req, plan, self._skills, log)
            if answer is not None:
                plan, uses = with_jobs(plan, answer)
                if uses:
                    self._skill_uses.update(uses)
                    self._plan = plan
        if req.policy.memory.enabled and workflow.patched(MEMORY_PATCH):
            plan, self._memory = await consult_memory(req, plan, log)
            if self._memory.advice:
                self._plan = plan
        log.add("checkpoint", "info", status="planned",
                outputs={"order": order, "tasks": len(order)})
        await log.flush()
        if await self._plan_approved(req, plan, order):
            self._set_phase("execute")
            await self._execute_all(req, plan, order, log)
            if req.goal:
                await self._summarize(req)

    async def _summarize(self, req: ResearchInput) -> None:
        """The output processor's answer to the goal, when a model is available."""
        tasks = [self._results[tid] for tid in self._order]
        if not self.agents.enabled or not any(t.status == "completed" for t in tasks):
            return
        assert req.goal is not None
        self._set_phase("summarize")
        digests = [TaskDigest(
            task_id=t.task_id, action=t.action, status=t.status, status_reason=t.status_reason,
            metrics=t.metrics, checks=[f"{c.check.describe()}: {'pass' if c.passed else 'fail'}"
                                       for c in t.checks],
            artifacts=[a.name for a in t.artifacts],
            stdout_tail=t.execution.stdout_tail[-1500:] if t.execution else "")
            for t in tasks]
        try:
            answer = await self.agents.call(
                SUMMARIZE_RUN, SummaryRequest(run_id=req.run_id, goal=req.goal, tasks=digests),
                SummaryAnswer, role="output_processor")
        except AgentUnavailable as err:
            self.log.add("agent_call", "error", agent="output_processor", status="no_answer",
                         outputs={"reason": err.reason})
            return
        self._answer = answer.answer

    async def _plan_approved(self, req: ResearchInput, plan: Plan, order: list[str]) -> bool:
        """The plan gate: automatic unless policy makes it human; a rejection cancels all."""
        if not self.gates.needs_person("plan"):
            return True
        self._set_phase("plan_gate")
        self._status = "waiting"
        upsert_keywords(**{STATUS_KEY.name: "waiting"})
        gate = await self.gates.ask("plan", f"run plan {req.plan_name} "
                                            f"({len(order)} tasks)?")
        self._status = "running"
        upsert_keywords(**{STATUS_KEY.name: "running"})
        if self.gates.approved(gate):
            return True
        reason = f"plan gate {gate.status} by {gate.by}" + (f": {gate.comment}"
                                                            if gate.comment else "")
        for decision in plan.decisions:
            self._states[decision.task_id] = "cancelled"
            self._results[decision.task_id] = TaskResult(
                task_id=decision.task_id, priority=decision.priority, action=decision.action,
                status="cancelled", status_reason=reason)
        return False

    async def _execute_all(self, req: ResearchInput, plan: Plan, order: list[str],
                           log: EventLog) -> None:
        decisions = plan.by_id()
        limit = req.policy.max_parallel
        pending = list(order)
        children: list[asyncio.Task[None]] = []
        while pending or self._running:
            for tid in list(pending):
                decision = decisions[tid]
                blocker = self._blocker(decision)
                if blocker is not None:
                    pending.remove(tid)
                    self._block(decision, blocker, log)
                elif len(self._running) < limit and self._ready(decision):
                    pending.remove(tid)
                    self._running.add(tid)
                    children.append(asyncio.create_task(self._run_task(req, decision, log)))
            if not self._running:
                break
            await self._until_one_finishes()
        await asyncio.gather(*children)
        await log.flush()

    async def _until_one_finishes(self) -> None:
        finished = len(self._results)
        await workflow.wait_condition(lambda: len(self._results) > finished)

    def _ready(self, decision: Decision) -> bool:
        return all(self._states[d] == "completed" for d in decision.dependencies)

    def _blocker(self, decision: Decision) -> str | None:
        for dep in decision.dependencies:
            if dep in self._results and self._states[dep] != "completed":
                return dep
        return None

    def _block(self, decision: Decision, blocker: str, log: EventLog) -> None:
        reason = (f"blocked by task {blocker}, which ended {self._states[blocker]}: "
                  f"{self._results[blocker].status_reason}")
        self._results[decision.task_id] = TaskResult(
            task_id=decision.task_id, priority=decision.priority, action=decision.action,
            status="blocked", status_reason=reason)
        self._states[decision.task_id] = "blocked"
        log.add("handoff", "info", status="blocked", inputs={"task_id": decision.task_id},
                outputs={"reason": reason})

    async def _run_task(self, req: ResearchInput, decision: Decision, log: EventLog) -> None:
        tid = decision.task_id
        self._states[tid] = "running"
        log.add("handoff", "start", status="running", inputs={"task_id": tid})
        task_input = TaskInput(run_id=req.run_id, decision=decision, queues=req.queues,
                               policy=req.policy,
                               dependency_artifacts=self._dependency_artifacts(decision),
                               goal=req.goal,
                               data=[d for d in req.data if d.name in decision.inputs],
                               budget=self.agents.budget(),
                               memory=self._memory.advice.get(tid),
                               skill=self._skill_uses.get(tid))
        try:
            result = await workflow.execute_child_workflow(
                TaskWorkflow.run, task_input, id=task_workflow_id(req.run_id, tid),
                task_queue=req.queues.orchestration,
            )
        except Exception as err:  # a task must always end with a status, never hang the run
            cancelled = isinstance(err.__cause__, CancelledError)
            reason = f"task workflow ended abnormally: {root_message(err)}"
            result = TaskResult(task_id=tid, priority=decision.priority, action=decision.action,
                                status="cancelled" if cancelled else "failed",
                                status_reason=reason)
        self._running.discard(tid)
        self.agents.charge(result.model)
        self._states[tid] = result.status
        self._results[tid] = result
        log.add("handoff", "complete", status=result.status,
                inputs={"task_id": tid}, outputs={"reason": result.status_reason})
        await log.flush()

    def _dependency_artifacts(self, decision: Decision) -> list[DependencyArtifact]:
        return [
            DependencyArtifact(task_id=dep, name=a.name, path=a.path, sha256=a.sha256)
            for dep in decision.dependencies
            for a in self._results[dep].artifacts
        ]

    def _result(self, req: ResearchInput, started: datetime) -> ResearchResult:
        now = workflow.now()
        tasks = [self._results[tid] for tid in self._order]
        done = sum(t.status == "completed" for t in tasks)
        status: RunStatus = ("completed" if done == len(tasks)
                             else "partial" if done else "failed")
        if all(t.status == "cancelled" for t in tasks):
            status = "rejected"
        if self._plan is None:
            status = "deferred"
        return ResearchResult(
            run_id=req.run_id, plan_name=req.plan_name, plan_sha256=req.plan_sha256,
            status=status, timestamp=now.strftime("%Y%m%d_%H%M%S"),
            started_at=started, finished_at=now, tasks=tasks,
            completion_by_priority=_completion_by_priority(tasks),
            gates=list(self.gates.records), goal=req.goal,
            status_reason=self._reason or _status_reason(status, tasks),
            plan=(self._plan if req.plan is None or self._memory.advice or self._skill_uses
                  else None),
            answer=self._answer, model=self.agents.spend,
            reflection=summarize(tasks, self._memory),
            skills=self._skill_summary(tasks),
        )

    def _skill_summary(self, tasks: list[TaskResult]) -> SkillSummary:
        summary = self._skills.model_copy(deep=True)
        note_results(summary, self._skill_uses, tasks)
        return summary

    def _set_phase(self, phase: str) -> None:
        self._phase = phase
        upsert_keywords(**{PHASE_KEY.name: phase})


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
