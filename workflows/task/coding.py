"""The implement step of a TaskWorkflow: the job to review, and the coder that writes one.

A task's job is the plan's, a matched skill's or memory's template; the coder writes one only
for a task that has none (fast path), and rewrites a rejected coded job (deep path: it also
sees the job before, why it was rejected and the interpreter's facts). Whatever the coder
writes passes the same review panel as any other job before it runs.
"""

from __future__ import annotations

from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.catalogue import WRITE_JOB
    from workflows.constants import digest
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.roles import CodeRequest, EnvironmentFacts
    from workflows.task.execution import Execution
    from workflows.task.phases import Phase
    from workflows.task.state import Finish, TaskState


class Coding:
    """The job of one task, and its coder.

    Args:
        state: the task's state (its decision, goal and data, the job before, the verdicts).
        agents: the task's role calls.
        execution: the sandbox steps (the environment probe the deep path shows the coder).
    """

    def __init__(self, state: TaskState, agents: AgentCalls, execution: Execution) -> None:
        self.state = state
        self.agents = agents
        self.execution = execution

    async def implement(self) -> None:
        """Settle the job to review: the plan's, a skill's or a template's, else the coder's."""
        state, prov = self.state, self.state.provenance
        state.move(Phase.IMPLEMENT)
        if state.task.skill is not None:
            prov.skill = state.task.skill
            prov.job_author = f"skill:{state.task.skill.skill_id}"
        advice = state.task.memory
        if advice is not None:
            prov.memory_rules = [u.rule_id for u in advice.rules]
            if advice.template_id:
                prov.template_id = advice.template_id
                prov.job_author = f"template:{advice.template_id}"
        if state.job is None or state.job.source is None:
            if not self.agents.enabled:
                raise Finish("deferred", "no job to run: the plan gives this task no `job`, "
                                         "and no skill or coding agent supplied one; add a "
                                         "`job` to the task or configure a model")
            state.job = await self.write_job("fast")
        state.job = self.in_run_environment(state.job)
        prov.job_source = state.job.filename or ""
        prov.job_sha256 = digest((state.job.source or "").encode())

    def resume(self, job: JobSpec, by: str) -> None:
        """Take the job a branch starts from (a checkpoint's, changed by the branch)."""
        state, prov = self.state, self.state.provenance
        state.move(Phase.IMPLEMENT)
        state.job = job
        prov.job_author = f"branch:{by}" if by else "branch"
        prov.job_source = job.filename or ""
        prov.job_sha256 = digest((job.source or "").encode())

    async def write_job(self, mode: Literal["fast", "deep"],
                        feedback: list[str] | None = None) -> JobSpec:
        """A job from the coder, or :class:`Finish` with why there is none."""
        state, task = self.state, self.state.task
        decision = task.decision
        req = CodeRequest(
            run_id=task.run_id, task_id=decision.task_id, mode=mode, goal=task.goal,
            action=decision.action, acceptance_criteria=decision.acceptance_criteria,
            checks=decision.checks, input_names=[i.name for i in decision.resolved_inputs],
            dependency_artifacts=[f"deps/{a.task_id}/{a.name}"
                                  for a in task.dependency_artifacts],
            data=task.data, previous_job=state.job if mode == "deep" else None,
            feedback=feedback or [],
            environment=await self._facts(mode), upstream=task.upstream,
            reused=[a for a in task.dependency_artifacts
                    if a.task_id not in decision.dependencies],
            instructions=task.skill.instructions if task.skill is not None else "",
            guidelines=task.guidelines)
        try:
            answer = await self.agents.call(WRITE_JOB, req, role="coder")
        except AgentUnavailable as err:
            raise Finish("deferred" if err.budget else "failed",
                         f"the coder wrote no job ({mode} path): {err.reason}") from err
        job = self.in_run_environment(answer.job)
        state.provenance.job_author = f"coder:{mode}"
        state.log.add("file_gen", "complete", agent="coder", status=f"job_written:{mode}",
                      outputs={"filename": job.filename, "sha256": digest(
                          (job.source or "").encode()), "expected_artifacts":
                          job.expected_artifacts, "expected_metrics": job.expected_metrics,
                          "confidence": answer.confidence, "reasoning": answer.reasoning[:500]})
        return job

    def _run_environment(self) -> str | None:
        """The run's environment, when it names one."""
        return self.state.task.policy.environment or None

    def in_run_environment(self, job: JobSpec) -> JobSpec:
        """``job`` in the run's environment when it names none itself (else unchanged)."""
        name = self._run_environment() if job.environment is None else None
        return job.model_copy(update={"environment": name}) if name else job

    async def _facts(self, mode: Literal["fast", "deep"]) -> EnvironmentFacts | None:
        """What the coder is told of the job's interpreter.

        In a run naming an environment: that environment's packages (prepared once, before the
        first job is written), or, on the deep path after the job ran, the packages of the
        environment it ran in. Otherwise the worker interpreter's, on the deep path only.
        """
        prepared = self.state.provenance.environment
        ran_in_one = prepared is not None and prepared.provisioned
        name = self._run_environment()
        if name and not (mode == "deep" and ran_in_one):
            if self.state.run_facts is None:
                self.state.run_facts = await self.execution.facts_of(name)
            return self.state.run_facts
        return await self.execution.environment() if mode == "deep" else None

    async def rewrite(self, end: Finish, rejected: str) -> JobSpec:
        """After reflection had no patch for a rejected coded job: the deep-path coder.

        Raises:
            Finish: ``end``, when no model wrote the job in the first place.
        """
        state = self.state
        if not (self.agents.enabled and state.provenance.job_author.startswith("coder")):
            raise end
        feedback = [f"{v.reviewer}: {f.message}" for v in state.verdicts for f in v.critical]
        return await self.write_job("deep", feedback or [rejected])
