"""The debuggers of a TaskWorkflow: three fixes for a failed job, reviewed and run side by side.

Reflection's rule table tries first on a failure; the debuggers only when it has no patch.
Every fix a model writes passes the code-patch guardrails and the same review panel as any job
before it runs; of the fixes that ran, the best becomes the task's result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeAlias, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.debugging import Candidate, check_code_patch, choose, group_alike
    from workflows.catalogue import DEBUG_JOB
    from workflows.common.failures import root_message
    from workflows.constants import digest
    from workflows.contracts.execution import EventScope, ExecutionOutcome
    from workflows.contracts.reflection import PatchChange
    from workflows.contracts.results import AppliedPatch
    from workflows.contracts.roles import (
        DEBUG_STRATEGIES,
        DebugAnswer,
        DebugFix,
        DebugRequest,
        DebugStrategy,
        EnvironmentFacts,
    )
    from workflows.contracts.verdicts import panel_approves
    from workflows.task.calls import TaskCalls
    from workflows.task.execution import Execution
    from workflows.task.phases import Phase
    from workflows.task.review import Review, describe_rejection
    from workflows.task.state import Finish, TaskState

DEBUGGABLE = frozenset({"nonzero_exit", "missing_dependency", "timeout", "out_of_memory"})
"""Failures a code fix may cure (never a sandbox violation or a kill from outside)."""

DebugReply: TypeAlias = DebugAnswer | AgentUnavailable
"""A debugger's fix, or why it gave none."""

StepT = TypeVar("StepT")


class Debugging:
    """The three debuggers for one task.

    Args:
        state: the task's state (the failed job and its outcome, the provenance).
        calls: the task's activity calls (the diagnostic script's review and run).
        agents: the task's role calls.
        review: the review step every fix passes.
        execution: the sandbox steps that run the fixes.
    """

    def __init__(self, state: TaskState, calls: TaskCalls, agents: AgentCalls, review: Review,
                 execution: Execution) -> None:
        self.state = state
        self.calls = calls
        self.agents = agents
        self.review = review
        self.execution = execution
        self.diagnostics = 0
        self.scopes: dict[DebugStrategy, EventScope] = {}
        """Each debugger's own event, which its calls, reviews and job runs nest under."""

    def possible(self) -> bool:
        """Whether the debuggers may try: models on, debuggers on, a failure code can cure."""
        outcome = self.state.outcome
        return (self.agents.enabled and self.state.task.policy.agents.debuggers
                and outcome is not None and outcome.outcome in DEBUGGABLE)

    async def debug(self, failed: str) -> None:
        """Three debuggers fix the failed job; the best fix that ran becomes the result.

        Raises:
            Finish: no debugger's fix passed the guardrails, the panel and a run.
        """
        state = self.state
        assert state.job is not None and state.outcome is not None
        state.move(Phase.DEBUG)
        env = await self.execution.environment()
        self.scopes = {s: state.log.open("agent_call", "start", agent=f"debugger_{s}",
                                         status="debugging", undrawn=True)
                       for s in DEBUG_STRATEGIES}
        answers = await asyncio.gather(
            self._as("direct", self._debugger("direct", env=None)),
            self._as("introspect", self._debugger("introspect", env=env)),
            self._as("diagnostic", self._diagnose_then_fix()))
        candidates, problems = self._guarded(list(answers))
        if not candidates:
            budget = any(isinstance(a, AgentUnavailable) and a.budget for a in answers)
            raise Finish("deferred" if budget else "failed_retry",
                         f"{failed}; the debuggers offered no usable fix: {'; '.join(problems)}")
        distinct = group_alike(candidates)
        reviews = await asyncio.gather(*(self._as(c.strategy, self.review.panel(
            c.job, DebugFix(strategies=c.agreeing, diagnosis=c.diagnosis, failure=state.outcome),
            env if c.job.environment == state.job.environment else None))
            for c in distinct))
        approved: list[Candidate] = []
        for c, verdicts in zip(distinct, reviews, strict=True):
            c.verdicts = verdicts
            if panel_approves(verdicts):
                approved.append(c)
            else:
                problems.append(f"{c.strategy}: rejected ({describe_rejection(verdicts)})")
        if not approved:
            raise Finish("failed_retry", f"{failed}; every debugger fix was rejected: "
                                         f"{'; '.join(problems)}")
        await asyncio.gather(*(self._as(c.strategy, self._run_candidate(c)) for c in approved))
        best = choose(approved)
        self._record_choice(approved, best)
        if best is None:
            ran = "; ".join(f"{c.strategy}: {c.outcome.outcome if c.outcome else 'not run'}"
                            for c in approved)
            raise Finish("failed_retry", f"{failed}; no debugger fix ran successfully ({ran})")
        assert best.outcome is not None
        state.job, state.outcome, state.verdicts = best.job, best.outcome, best.verdicts
        state.provenance.job_author = f"debugger:{best.strategy}"

    async def _as(self, strategy: DebugStrategy, step: Awaitable[StepT]) -> StepT:
        """``step``, its events nested under the debugger ``strategy``'s."""
        with self.state.log.within(self.scopes[strategy]):
            return await step

    async def _debugger(self, strategy: DebugStrategy, *, env: EnvironmentFacts | None,
                        diagnostic_output: str | None = None,
                        diagnostic: DebugAnswer | None = None) -> DebugReply:
        """One debugger's answer.

        The diagnostic one's second stage sees its first stage's script (``diagnostic``, that
        stage's answer) and what the script printed (``diagnostic_output``).
        """
        script = diagnostic.diagnostic_job if diagnostic is not None else None
        state = self.state
        assert state.job is not None and state.outcome is not None
        decision = state.task.decision
        req = DebugRequest(
            run_id=state.task.run_id, task_id=decision.task_id, strategy=strategy,
            action=decision.action, acceptance_criteria=decision.acceptance_criteria,
            checks=decision.checks, input_names=[i.name for i in decision.resolved_inputs],
            job=state.job, outcome=state.outcome, environment=env,
            diagnostic_output=diagnostic_output,
            diagnostic_script=(script.source or script.code) if script is not None else None,
            diagnostic_purpose=diagnostic.diagnosis if diagnostic is not None else "",
            guidelines=state.task.guidelines)
        try:
            return await self.agents.call(DEBUG_JOB, req, role=f"debugger_{strategy}")
        except AgentUnavailable as err:
            return err

    async def _diagnose_then_fix(self) -> DebugReply:
        """The diagnostic strategy: review and run its diagnostic script, then ask for a fix."""
        first = await self._debugger("diagnostic", env=None)
        if isinstance(first, AgentUnavailable) or first.diagnostic_job is None:
            return first
        script, log = first.diagnostic_job, self.state.log
        prepared = self.state.provenance.environment
        if prepared is not None and prepared.provisioned and self.state.job is not None:
            # the script looks at the failed job's environment, so it runs in it
            script = script.model_copy(update={"environment": self.state.job.environment,
                                               "requirements": self.state.job.requirements})
        else:
            prepared = None
        verdicts = await self.calls.review(script, diagnostic=True)
        if not panel_approves(verdicts):
            reason = f"its diagnostic script was rejected ({describe_rejection(verdicts)})"
            log.add("agent_call", "error", agent="debugger_diagnostic", status="rejected",
                    outputs={"reason": reason})
            return AgentUnavailable(reason)
        self.diagnostics += 1
        try:
            ran = await self.calls.execute(script, self.diagnostics, label="diagnose",
                                           environment=prepared)
        except ActivityError as err:
            return AgentUnavailable(f"diagnostic: its script could not run: "
                                    f"{root_message(err)}")
        log.add("code_exec", "complete", agent="debugger_diagnostic", status=ran.outcome,
                outputs={"exit_code": ran.exit_code, "stdout_tail": ran.stdout_tail[-2000:],
                         "stderr_tail": ran.stderr_tail[-2000:]})
        output = (f"exit code {ran.exit_code} ({ran.outcome})\n--- stdout ---\n"
                  f"{ran.stdout_tail[-4000:]}\n--- stderr ---\n{ran.stderr_tail[-4000:]}")
        if ran.workspace:
            output = output.replace(ran.workspace, ".")
        return await self._debugger("diagnostic", env=None, diagnostic_output=output,
                                    diagnostic=first)

    def _guarded(self, answers: list[DebugReply]) -> tuple[list[Candidate], list[str]]:
        """Fixes that pass the code-patch guardrails, and why the others were dropped."""
        state = self.state
        assert state.job is not None
        candidates: list[Candidate] = []
        problems: list[str] = []
        for strategy, answer in zip(DEBUG_STRATEGIES, answers, strict=True):
            if isinstance(answer, AgentUnavailable):
                problems.append(f"{strategy}: {answer.reason}")
                continue
            if answer.job is None:
                problems.append(f"{strategy}: no fix proposed")
                continue
            if answer.job.environment is None and state.job.environment is not None:
                # a fix runs where the failed job ran unless it names another environment
                answer.job = answer.job.model_copy(
                    update={"environment": state.job.environment})
            violations = check_code_patch(state.job, answer.job, state.task.policy.review)
            if violations:
                problems.append(f"{strategy}: {'; '.join(violations)}")
                state.log.add("tool_call", "error", agent=f"debugger_{strategy}",
                              status="guardrail", outputs={"violations": violations},
                              under=self.scopes[strategy])
                continue
            candidates.append(Candidate(strategy=answer.strategy, job=answer.job,
                                        diagnosis=answer.diagnosis,
                                        confidence=answer.confidence))
        return candidates, problems

    async def _run_candidate(self, c: Candidate) -> None:
        try:
            c.outcome = await self.execution.run(c.job)
        except Finish as end:  # the sandbox could not run it: this fix simply did not run
            c.outcome = ExecutionOutcome(outcome="killed", reason=end.reason)

    def _record_choice(self, approved: list[Candidate], best: Candidate | None) -> None:
        state = self.state
        assert state.job is not None
        old = digest((state.job.source or "").encode())
        for c in approved:
            new = digest((c.job.source or "").encode())
            state.provenance.patches.append(AppliedPatch(
                patch_id=f"debug-{c.strategy}-{new[:8]}", phase=Phase.DEBUG,
                root_cause=c.diagnosis[:300], confidence=c.confidence, sha256=new,
                changes=[PatchChange(field="source", old_value=old, new_value=new,
                                     reason=c.diagnosis[:300])],
                decision="debugger:" + "+".join(c.agreeing),
                outcome="applied" if c is best else (
                    f"not chosen: {c.outcome.outcome if c.outcome else 'not run'}")))
        state.log.add("agent_call", "complete", agent="output_processor",
                      status="chosen" if best else "none_succeeded",
                      outputs={"chosen": best.strategy if best else None,
                               "candidates": [{"strategies": c.agreeing,
                                               "outcome": c.outcome.outcome if c.outcome
                                               else None,
                                               "metrics": c.outcome.metrics if c.outcome else {},
                                               "confidence": c.confidence} for c in approved]})
