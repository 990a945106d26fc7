"""StudyWorkflow: a research goal pursued in cycles, each decided by verified evidence.

One execution runs one cycle, then continues as new with the study's compact state, so a
long study keeps a small history. A cycle is a child ``ResearchWorkflow``
(``<study>.cycle-<n>``) told where the study stands (``ResearchInput.study``: the hypothesis
tree, the latest cycles, the carried tasks and why this cycle runs). Its plan is, in order:
a person's (``supply_plan``, ``assay plan STUDY FILE``), the next of the study's own plans,
or the planner's (a goal study with a model); a study with none of these waits for a
person's plan (as long as the ``cycle`` gate's ``timeout_s``). When the cycle ends,
``close_cycle`` judges its hypotheses and decides by the rules (``workflows.study.rules``);
a human ``cycle`` gate lets a person confirm, stop or override that decision. The study's
report is written after every cycle. ``stop`` ends the study after the cycle that runs; a
Temporal cancel cancels the running cycle (which still writes its report) and the study
writes its own before it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RawValue, SearchAttributePair
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
)
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import CLOSE_CYCLE, RESOLVE_REUSE
    from workflows.common.details import outcome_text, wait_summary
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.common.failures import root_message
    from workflows.common.gates import GateKeeper, GateRefusedError
    from workflows.constants import (
        KIND_KEY,
        PARENT_KEY,
        PHASE_KEY,
        PLAN_KEY,
        STATUS_KEY,
        cycle_run_id,
        digest,
        started_with,
    )
    from workflows.contracts.cycles import (
        CloseCycleInput,
        CyclePlan,
        ResolveReuseInput,
        StudyInput,
        StudyProgress,
        StudyResult,
        StudyStatus,
        StudyStop,
    )
    from workflows.contracts.execution import DependencyArtifact
    from workflows.contracts.gates import GateDecision, GateRecord
    from workflows.contracts.plaintext import clip
    from workflows.contracts.results import ReportPaths, ResearchInput, ResearchResult
    from workflows.contracts.study import CycleDecision, StudyState, context_of
    from workflows.patches import (
        OWN_VERDICTS_PATCH,
        STUDY_PATCHES_FIRST_PATCH,
        STUDY_SYNTHESIS_PATCH,
    )
    from workflows.research.workflow import ResearchWorkflow
    from workflows.study.carry import with_decision
    from workflows.study.conclusion import concluded
    from workflows.study.reporting import write_study_report
    from workflows.study.requests import decided, override, read_stop, study_plan
    from workflows.study.synthesis import Synthesized, synthesize


@workflow.defn(name="StudyWorkflow")
class StudyWorkflow:
    """A study: one cycle per execution, continued as new until its rules or a person stop."""

    @workflow.init
    def __init__(self, inp: StudyInput) -> None:
        self.inp = inp
        self.state: StudyState = inp.state
        self.plans: list[CyclePlan] = list(inp.plans)
        self.stop_asked: StudyStop | None = inp.stop
        self.log = EventLog(inp.state.study_id, "study")
        self.gates = GateKeeper(inp.policy.gates, self.log)
        self.phase = "cycle"
        self.run_id: str | None = None
        self.needs_plan = False

    # --- what people see and send ------------------------------------------------------------

    @workflow.query(name="progress")
    def progress(self) -> StudyProgress:
        """The cycle, phase and waiting gate, the study's state and whether it waits for a plan."""
        return StudyProgress(study_id=self.state.study_id, phase=self.phase,
                             cycle=self.state.cycles + (self.phase == "cycle"),
                             run_id=self.run_id, waiting=self.gates.waiting,
                             needs_plan=self.needs_plan, state=self.state, stop=self.stop_asked,
                             approvers=list(self.inp.policy.gates.cycle.approvers),
                             refused=self.gates.refusals())

    @workflow.signal(name="approve")
    def approve(self, raw: RawValue) -> None:
        """Decide the ``cycle`` gate (``approve``, ``reject``, or a ``choice`` instead)."""
        decision = self.gates.parse(raw)
        if decision is None:
            return
        problem = self._check_choice(decision)
        if problem:
            self.gates.refuse(decision, problem)
            return
        with contextlib.suppress(GateRefusedError):
            self.gates.offer(decision)

    @workflow.update(name="decide")
    def decide(self, raw: RawValue) -> GateRecord:
        """Decide the ``cycle`` gate and answer with it; a refusal fails the update."""
        decision = self.gates.decision_of(raw)
        problem = self._check_choice(decision)
        if problem:
            raise self.gates.refused(decision, problem)
        return self.gates.settle(decision)

    @decide.validator
    def _check_decision(self, raw: RawValue) -> None:
        self.gates.check_size(raw)

    @workflow.update(name="supply_plan")
    def supply_plan(self, raw: RawValue) -> StudyProgress:
        """A person's plan for the next cycle (before the study's own plans)."""
        self.plans.insert(0, study_plan(raw))
        self.log.add("approval", "info", status="plan_supplied",
                     inputs={"plan": self.plans[0].plan_name, "by": self.plans[0].by,
                             "plan_sha256": self.plans[0].plan_sha256})
        return self.progress()

    @supply_plan.validator
    def _check_plan(self, raw: RawValue) -> None:
        study_plan(raw)

    @workflow.signal(name="stop")
    def stop(self, raw: RawValue) -> None:
        """End the study after the cycle that runs (a waiting plan or gate ends it now).

        Who may stop it: the cycle gate's approvers (empty: anyone); a refusal is recorded.
        """
        asked = read_stop(raw)
        if isinstance(asked, str):
            self._stop_refused("unknown", asked)
            return
        if self.stop_asked is not None:
            return
        allowed = self.inp.policy.gates.cycle.approvers
        if allowed and asked.by not in allowed:
            self._stop_refused(clip(asked.by, 64), f"may not stop this study (allowed: "
                                                   f"{', '.join(allowed)})")
            return
        self.stop_asked = asked
        self.log.add("approval", "info", agent=asked.by, status="stop_asked",
                     outputs={"comment": asked.comment, "channel": asked.channel or "temporal"})
        if self.gates.waiting is not None:  # a waiting cycle gate is answered by the stop
            with contextlib.suppress(GateRefusedError):
                self.gates.offer(GateDecision(gate="cycle", decision="reject", by=asked.by,
                                              comment=asked.comment or "stopped",
                                              channel=asked.channel))

    def _stop_refused(self, by: str, reason: str) -> None:
        """Record a refused ``stop``, with the gates' refusals (written at once)."""
        self.gates.refuse_request(by, "stop", reason)

    # --- the cycle ---------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: StudyInput) -> StudyResult:
        """Run the next cycle, decide, and continue as new or end with the study's report."""
        started = inp.started_at or workflow.now()
        if workflow.patched(STUDY_PATCHES_FIRST_PATCH):
            # Settled now, before any local activity: ``_report`` then reads the values kept.
            # Settled at the end, right after a local activity, a query during it could move
            # their markers to the next workflow task, where replay would not find them.
            workflow.patched(OWN_VERDICTS_PATCH)
            workflow.patched(STUDY_SYNTHESIS_PATCH)
        upsert_keywords(**{KIND_KEY.name: "study", STATUS_KEY.name: "running"})
        if self.stop_asked is not None:
            return await self._end("completed", self._stopped_reason(), started)
        plan = await self._next_plan()
        if plan is None and not self._planner_plans():
            why = (self._stopped_reason() if self.stop_asked else
                   f"no plan came for cycle {self.state.cycles + 1} within "
                   f"{inp.policy.gates.cycle.timeout_s:g} s")
            return await self._end("completed", why, started)
        try:
            earlier = await self._earlier(plan)
        except (ActivityError, ApplicationError) as err:  # a local activity's own failure
            return await self._end("failed", f"cycle {self.state.cycles + 1}: "
                                             f"{root_message(err)}", started)
        try:
            result = await self._run_cycle(plan, earlier)
        except asyncio.CancelledError:
            await self._report("cancelled", started)
            raise
        except ChildWorkflowError as err:
            if isinstance(err.cause, CancelledError):  # the study's cancel reached its cycle
                await self._report("cancelled", started,
                                   f"cycle {self.state.cycles + 1} was cancelled")
                raise asyncio.CancelledError("the study was cancelled") from err
            return await self._end("failed", f"cycle {self.state.cycles + 1} failed: "
                                             f"{root_message(err)}", started)
        self._set_phase("deciding")
        try:
            self.state = await CLOSE_CYCLE.run(CloseCycleInput(
                state=self.state, result=result, plan=plan.plan if plan else None,
                skills_queue=self.inp.queues.skills))
        except (ActivityError, ApplicationError) as err:  # a local activity's own failure
            return await self._end("failed", root_message(err), started)
        decision = await self._confirm()
        if decision.action == "stop" or self.stop_asked is not None:
            reason = decision.reason if decision.action == "stop" else self._stopped_reason()
            return await self._end("completed", reason, started)
        await self._report("running", started)
        workflow.continue_as_new(StudyInput(
            state=self.state, plans=self.plans, data=inp.data, policy=inp.policy,
            queues=inp.queues, stop=self.stop_asked, started_at=started))

    def _set_phase(self, phase: str) -> None:
        """Enter ``phase``, also as ``AssayPhase`` (how ``assay gates`` finds waiting studies)."""
        self.phase = phase
        upsert_keywords(**{PHASE_KEY.name: phase})
        self.log.details.set("phase", f"Study {self.state.study_id}, cycle "
                                      f"{self.state.cycles + (phase == 'cycle')}: **{phase}**")

    def _planner_plans(self) -> bool:
        return self.state.goal is not None and self.inp.policy.agents.enabled

    async def _next_plan(self) -> CyclePlan | None:
        """The next cycle's plan; None when the planner plans it (or none came in time)."""
        if self.plans or self._planner_plans():
            return self.plans.pop(0) if self.plans else None
        self._set_phase("waiting")
        self.needs_plan = True
        self.log.details.set("gate", f"**Waiting** for a person's plan for cycle "
                                     f"{self.state.cycles + 1}: `assay plan "
                                     f"{self.state.study_id} PLAN.json`")
        self.log.add("checkpoint", "info", status="needs_plan",
                     outputs={"cycle": self.state.cycles + 1})
        await self.log.flush()
        timeout = self.inp.policy.gates.cycle.timeout_s
        summary = wait_summary(f"cycle {self.state.cycles + 1} plan", [], timeout)
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: bool(self.plans) or self.stop_asked is not None,
                timeout=timedelta(seconds=timeout), timeout_summary=summary)
        self.needs_plan = False
        self.log.details.set("gate", None)
        return self.plans.pop(0) if self.plans and self.stop_asked is None else None

    async def _earlier(self, plan: CyclePlan | None) -> list[DependencyArtifact]:
        """The earlier cycles' verified artifacts the plan's tasks reuse."""
        refs = sorted({ref for d in plan.plan.decisions for ref in d.reuse}) if plan else []
        if not refs:
            return []
        reports = {s.cycle: s.results_json for s in self.state.summaries if s.results_json}
        digests = {s.cycle: s.results_sha256 for s in self.state.summaries if s.results_sha256}
        return await RESOLVE_REUSE.run(ResolveReuseInput(refs=refs, reports=reports,
                                                         digests=digests))

    async def _run_cycle(self, plan: CyclePlan | None,
                         earlier: list[DependencyArtifact]) -> ResearchResult:
        """Run the next cycle as a child run and return how it ended."""
        state, inp = self.state, self.inp
        number = state.cycles + 1
        run_id = cycle_run_id(state.study_id, number)
        self._set_phase("cycle")
        self.run_id = run_id
        name = plan.plan_name if plan else f"{state.study_id} cycle {number}"
        sha = plan.plan_sha256 if plan else digest(f"{state.goal}\n{number}".encode())
        self.log.add("handoff", "start", status="cycle",
                     inputs={"cycle": number, "run_id": run_id, "plan": name,
                             "by": plan.by if plan else "planner"})
        await self.log.flush()
        result = await workflow.execute_child_workflow(
            ResearchWorkflow.run, ResearchInput(
                run_id=run_id, plan_name=name, plan_sha256=sha,
                plan=plan.plan if plan else None, goal=state.goal, data=inp.data,
                policy=inp.policy, queues=inp.queues, study=context_of(state),
                earlier=earlier),
            id=run_id, task_queue=inp.queues.orchestration,
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            search_attributes=started_with("run",
                                           SearchAttributePair(PARENT_KEY, state.study_id),
                                           SearchAttributePair(PLAN_KEY, name)),
            static_summary=clip(f"cycle {number}: {name}", 200))
        self.log.add("handoff", "complete", status=result.status,
                     inputs={"cycle": number, "run_id": run_id},
                     outputs={"reason": result.status_reason})
        return result

    async def _confirm(self) -> CycleDecision:
        """The rules' decision, or a person's at the ``cycle`` gate."""
        latest = self.state.latest()
        assert latest is not None and latest.decision is not None
        decision = latest.decision
        self.log.add("checkpoint", "complete", status=decision.action,
                     outputs={"cycle": latest.cycle, "reason": decision.reason,
                              "hypotheses": decision.hypotheses, "pursue": decision.pursue})
        if decision.escalated:  # the escalation's own event (no command: the log is flushed below)
            self.log.add("checkpoint", "info", status="escalated",
                         outputs={"cycle": latest.cycle, "abandon": decision.abandon,
                                  "pursue": decision.pursue, "reason": decision.reason})
        if not self.gates.needs_person("cycle"):
            await self.log.flush()
            return decision
        self._set_phase("waiting")
        gate = await self.gates.ask("cycle", f"cycle {latest.cycle}: {decision.action} — "
                                             f"{clip(decision.reason, 600)}")
        chosen = decided(gate, decision, approved=self.gates.approved(gate),
                         tree=self.state.tree)
        if chosen is not decision:
            self.state = with_decision(self.state, chosen)
        return chosen

    def _check_choice(self, decision: GateDecision) -> str:
        """Why a ``cycle`` gate's ``choice`` cannot be taken (empty: it can)."""
        if decision.gate != "cycle" or decision.choice is None:
            return ""
        try:
            override(decision.choice, decision.by, "", self.state.tree)
        except ValueError as err:
            return str(err)
        return ""

    def _stopped_reason(self) -> str:
        asked = self.stop_asked
        if asked is None:
            return "stopped"
        return f"stopped by {asked.by}" + (f" ({clip(asked.comment, 300)})"
                                           if asked.comment else "")

    async def _end(self, status: StudyStatus, reason: str, started: datetime) -> StudyResult:
        self._set_phase("report")
        self.log.add("checkpoint", "complete", status=status, outputs={"reason": reason})
        paths = await self._report(status, started, reason)
        upsert_keywords(**{STATUS_KEY.name: status})
        self._set_phase("done")
        self.log.details.set("outcome", outcome_text(status, reason))
        latest = self.state.latest()
        return StudyResult(study_id=self.state.study_id, status=status,
                           cycles=self.state.cycles,
                           decision=latest.decision if latest else None, reason=reason,
                           report=paths)

    async def _report(self, status: StudyStatus, started: datetime,
                      reason: str = "") -> ReportPaths | None:
        """Write the report; a study that ends concludes its undecided hypotheses first."""
        answer = Synthesized(self.state)
        if status != "running":
            own = workflow.patched(OWN_VERDICTS_PATCH)
            self.state = self.state.model_copy(update={
                "tree": concluded(self.state.tree, self.state.cycles, own_tests=own)})
            if workflow.patched(STUDY_SYNTHESIS_PATCH):
                answer = await synthesize(self.inp, self.state, status, reason, self.log)
                self.state = answer.state
        await self.log.flush()
        return await write_study_report(self.state, status, started, self.log, reason,
                                        synthesis=answer.synthesis, note=answer.note)
