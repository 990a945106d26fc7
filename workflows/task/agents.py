"""The model-backed steps of a TaskWorkflow: coder, model reviewers, debuggers.

Deterministic first: the reviewers' own checks always run and a model can only add to them;
reflection's rule table tries first on a failure, the debuggers only when it has no patch.
Every fix a model writes passes the same guardrails and review panel as any job before it runs.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentUnavailable
    from workflows.agents.debugging import (
        Candidate,
        check_code_patch,
        choose,
        group_alike,
        relevant_facts,
    )
    from workflows.agents.roles import (
        DEBUG_JOB,
        WRITE_JOB,
        CodeAnswer,
        CodeRequest,
        DebugAnswer,
        DebugRequest,
        DebugStrategy,
        EnvironmentFacts,
    )
    from workflows.common.failures import root_message
    from workflows.constants import digest
    from workflows.contracts.execution import ExecutionOutcome
    from workflows.contracts.executive import (
        PatchChange,
        panel_approves,
    )
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.results import AppliedPatch
    from workflows.task.phases import Phase
    from workflows.task.state import Finish, describe_rejection
    from workflows.task.steps import TaskSteps

DEBUGGABLE = frozenset({"nonzero_exit", "missing_dependency", "timeout", "out_of_memory"})
"""Failures a code fix may cure (never a sandbox violation or a kill from outside)."""


class TaskAgents(TaskSteps):
    """Coder and debuggers for one task."""

    # --- coder ------------------------------------------------------------------------------

    async def _write_job(self, mode: Literal["fast", "deep"],
                         feedback: list[str] | None = None) -> JobSpec:
        """A job from the coder, or :class:`Finish` with why there is none."""
        decision = self.task.decision
        req = CodeRequest(
            run_id=self.task.run_id, task_id=decision.task_id, mode=mode, goal=self.task.goal,
            action=decision.action, acceptance_criteria=decision.acceptance_criteria,
            checks=decision.checks, input_names=[i.name for i in decision.resolved_inputs],
            dependency_artifacts=[f"deps/{a.task_id}/{a.name}"
                                  for a in self.task.dependency_artifacts],
            data=self.task.data, previous_job=self.job if mode == "deep" else None,
            feedback=feedback or [],
            environment=await self._environment() if mode == "deep" else None)
        try:
            answer = await self.agents.call(WRITE_JOB, req, CodeAnswer, role="coder")
        except AgentUnavailable as err:
            raise Finish("deferred" if err.budget else "failed",
                         f"the coder wrote no job ({mode} path): {err.reason}") from err
        job = answer.job
        self.provenance.job_author = f"coder:{mode}"
        self.log.add("file_gen", "complete", agent="coder", status=f"job_written:{mode}",
                     outputs={"filename": job.filename, "sha256": digest(
                         (job.source or "").encode()), "expected_artifacts":
                         job.expected_artifacts, "expected_metrics": job.expected_metrics,
                         "confidence": answer.confidence, "reasoning": answer.reasoning[:500]})
        return job

    async def _rewrite(self, end: Finish, rejected: str) -> JobSpec:
        """After reflection had no patch for a rejected coded job: the deep-path coder."""
        if not (self.agents.enabled and self.provenance.job_author.startswith("coder")):
            raise end
        feedback = [f"{v.reviewer}: {f.message}" for v in self.verdicts for f in v.critical]
        return await self._write_job("deep", feedback or [rejected])

    async def _environment(self) -> EnvironmentFacts | None:
        """The interpreter's Python and the job's packages; None if the probe failed."""
        assert self.job is not None
        try:
            return relevant_facts(self.job, await self.calls.environment())
        except ActivityError as err:
            self.log.add("tool_call", "error", agent="sandbox", status="probe_failed",
                         outputs={"reason": root_message(err)})
            return None

    # --- debuggers --------------------------------------------------------------------------

    def _can_debug(self) -> bool:
        outcome = self.outcome
        return (self.agents.enabled and self.task.policy.agents.debuggers
                and outcome is not None and outcome.outcome in DEBUGGABLE)

    async def _debug(self, failed: str) -> None:
        """Three debuggers fix the failed job; the best fix that ran becomes the result.

        Raises:
            Finish: no debugger's fix passed the guardrails, the panel and a run.
        """
        assert self.job is not None and self.outcome is not None
        self._move(Phase.DEBUG)
        env = await self._environment()
        answers = await asyncio.gather(self._debugger("direct", env=None),
                                       self._debugger("introspect", env=env),
                                       self._diagnose_then_fix())
        candidates, problems = self._guarded(list(answers))
        if not candidates:
            budget = any(isinstance(a, AgentUnavailable) and a.budget for a in answers)
            raise Finish("deferred" if budget else "failed_retry",
                         f"{failed}; the debuggers offered no usable fix: {'; '.join(problems)}")
        distinct = group_alike(candidates)
        reviews = await asyncio.gather(*(self._review(c.job) for c in distinct))
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
        await asyncio.gather(*(self._run_candidate(c) for c in approved))
        best = choose(approved)
        self._record_choice(approved, best)
        if best is None:
            ran = "; ".join(f"{c.strategy}: {c.outcome.outcome if c.outcome else 'not run'}"
                            for c in approved)
            raise Finish("failed_retry", f"{failed}; no debugger fix ran successfully ({ran})")
        assert best.outcome is not None
        self.job, self.outcome, self.verdicts = best.job, best.outcome, best.verdicts
        self.provenance.job_author = f"debugger:{best.strategy}"

    async def _debugger(self, strategy: DebugStrategy, *, env: EnvironmentFacts | None,
                        diagnostic_output: str | None = None,
                        ) -> DebugAnswer | AgentUnavailable:
        assert self.job is not None and self.outcome is not None
        decision = self.task.decision
        req = DebugRequest(
            run_id=self.task.run_id, task_id=decision.task_id, strategy=strategy,
            action=decision.action, acceptance_criteria=decision.acceptance_criteria,
            checks=decision.checks, input_names=[i.name for i in decision.resolved_inputs],
            job=self.job, outcome=self.outcome, environment=env,
            diagnostic_output=diagnostic_output)
        try:
            return await self.agents.call(DEBUG_JOB, req, DebugAnswer,
                                          role=f"debugger_{strategy}")
        except AgentUnavailable as err:
            return err

    async def _diagnose_then_fix(self) -> DebugAnswer | AgentUnavailable:
        """The diagnostic strategy: review and run its diagnostic script, then ask for a fix."""
        first = await self._debugger("diagnostic", env=None)
        if isinstance(first, AgentUnavailable) or first.diagnostic_job is None:
            return first
        script = first.diagnostic_job
        verdicts = await self.calls.review(script, diagnostic=True)
        if not panel_approves(verdicts):
            reason = f"its diagnostic script was rejected ({describe_rejection(verdicts)})"
            self.log.add("agent_call", "error", agent="debugger_diagnostic", status="rejected",
                         outputs={"reason": reason})
            return AgentUnavailable(reason)
        self.diagnostics += 1
        try:
            ran = await self.calls.execute(script, self.diagnostics, label="diagnose")
        except ActivityError as err:
            return AgentUnavailable(f"diagnostic: its script could not run: "
                                    f"{root_message(err)}")
        self.log.add("code_exec", "complete", agent="debugger_diagnostic", status=ran.outcome,
                     outputs={"exit_code": ran.exit_code, "stdout_tail": ran.stdout_tail[-2000:],
                              "stderr_tail": ran.stderr_tail[-2000:]})
        output = (f"exit code {ran.exit_code} ({ran.outcome})\n--- stdout ---\n"
                  f"{ran.stdout_tail[-4000:]}\n--- stderr ---\n{ran.stderr_tail[-4000:]}")
        if ran.workspace:
            output = output.replace(ran.workspace, ".")
        return await self._debugger("diagnostic", env=None, diagnostic_output=output)

    def _guarded(self, answers: list[DebugAnswer | AgentUnavailable],
                 ) -> tuple[list[Candidate], list[str]]:
        """Fixes that pass the code-patch guardrails, and why the others were dropped."""
        assert self.job is not None
        candidates: list[Candidate] = []
        problems: list[str] = []
        for strategy, answer in zip(("direct", "introspect", "diagnostic"), answers, strict=True):
            if isinstance(answer, AgentUnavailable):
                problems.append(f"{strategy}: {answer.reason}")
                continue
            if answer.job is None:
                problems.append(f"{strategy}: no fix proposed")
                continue
            violations = check_code_patch(self.job, answer.job, self.task.policy.review)
            if violations:
                problems.append(f"{strategy}: {'; '.join(violations)}")
                self.log.add("tool_call", "error", agent=f"debugger_{strategy}",
                             status="guardrail", outputs={"violations": violations})
                continue
            candidates.append(Candidate(strategy=answer.strategy, job=answer.job,
                                        diagnosis=answer.diagnosis,
                                        confidence=answer.confidence))
        return candidates, problems

    async def _run_candidate(self, c: Candidate) -> None:
        try:
            c.outcome = await self._execute(c.job)
        except Finish as end:  # the sandbox could not run it: this fix simply did not run
            c.outcome = ExecutionOutcome(outcome="killed", reason=end.reason)

    def _record_choice(self, approved: list[Candidate], best: Candidate | None) -> None:
        assert self.job is not None
        old = digest((self.job.source or "").encode())
        for c in approved:
            new = digest((c.job.source or "").encode())
            chosen = c is best
            self.provenance.patches.append(AppliedPatch(
                patch_id=f"debug-{c.strategy}-{new[:8]}", phase=Phase.DEBUG,
                root_cause=c.diagnosis[:300], confidence=c.confidence, sha256=new,
                changes=[PatchChange(field="source", old_value=old, new_value=new,
                                     reason=c.diagnosis[:300])],
                decision="debugger:" + "+".join(c.agreeing),
                outcome="applied" if chosen else (
                    f"not chosen: {c.outcome.outcome if c.outcome else 'not run'}")))
        self.log.add("agent_call", "complete", agent="output_processor",
                     status="chosen" if best else "none_succeeded",
                     outputs={"chosen": best.strategy if best else None,
                              "candidates": [{"strategies": c.agreeing,
                                              "outcome": c.outcome.outcome if c.outcome else None,
                                              "metrics": c.outcome.metrics if c.outcome else {},
                                              "confidence": c.confidence} for c in approved]})
