"""The sandbox steps of a TaskWorkflow: run a job, check its evidence, re-link what was misplaced.

Each step counts its attempt, records its events and keeps a snapshot; a step the sandbox or
the verifier cannot do at all ends the task with :class:`Finish` and the reason.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.agents.debugging import relevant_facts
    from workflows.common.failures import root_message
    from workflows.contracts.environments import PreparedEnvironment, PrepareEnvironmentInput
    from workflows.contracts.execution import ExecutionOutcome, Verification
    from workflows.contracts.plan import JobSpec
    from workflows.contracts.roles import EnvironmentFacts
    from workflows.task.calls import TaskCalls
    from workflows.task.phases import Phase
    from workflows.task.state import Finish, TaskState


MAX_FACT_PACKAGES = 200


def environment_facts(prepared: PreparedEnvironment) -> EnvironmentFacts:
    """What the coder and debuggers are told of a provisioned environment."""
    pins = [pin.split("==", 1) for pin in prepared.pins[:MAX_FACT_PACKAGES]]
    return EnvironmentFacts(python=prepared.python, environment=prepared.label(),
                            packages={p[0]: p[1] for p in pins if len(p) == 2})


class Execution:
    """Runs and verifies one task's jobs.

    Args:
        state: the task's state (attempts, events, snapshots, the job and its outcome).
        calls: the task's activity calls (sandbox, verifier, re-scan).
    """

    def __init__(self, state: TaskState, calls: TaskCalls) -> None:
        self.state = state
        self.calls = calls

    async def run(self, job: JobSpec) -> ExecutionOutcome:
        """Run ``job`` in the sandbox and record how it went.

        Its start event is the attempt's: the events of the run nest under it.
        """
        state, log = self.state, self.state.log
        state.bump(Phase.EXECUTE)
        attempt = state.attempts[Phase.EXECUTE]
        started = log.open("code_exec", "start", agent="sandbox",
                           inputs={"filename": job.filename, "args": job.args,
                                   "resources": job.resources.model_dump()},
                           meta={"attempt": attempt})
        with log.within(started):
            return await self._attempt(job, attempt, started.id)

    async def _attempt(self, job: JobSpec, attempt: int, start_id: str) -> ExecutionOutcome:
        state, log = self.state, self.state.log
        await log.flush()
        environment = await self.prepare(job)
        try:
            outcome = await self.calls.execute(job, attempt, environment=environment)
        except ActivityError as err:
            reason = f"the sandbox could not run the job: {root_message(err)}"
            log.add("error", "error", agent="sandbox", status="failed",
                    outputs={"reason": reason})
            raise Finish("failed", reason) from err
        ok = outcome.outcome == "succeeded"
        log.add("code_exec", "complete" if ok else "error", agent="sandbox",
                status=outcome.outcome, duration_ms=int(outcome.duration_s * 1000),
                outputs={"exit_code": outcome.exit_code, "reason": outcome.reason,
                         "peak_memory_mb": outcome.peak_memory_mb,
                         "stdout_tail": outcome.stdout_tail[-2000:],
                         "stderr_tail": outcome.stderr_tail[-2000:],
                         "isolation": outcome.isolation,
                         "environment": outcome.environment},
                meta={"start_event_id": start_id})
        for artifact in outcome.artifacts:
            log.add("file_gen", "complete", agent="sandbox", status="created",
                    outputs={"name": artifact.name, "size": artifact.size,
                             "sha256": artifact.sha256})
        state.snapshot(Phase.EXECUTE, outcome.model_dump(mode="json"))
        return outcome

    async def prepare(self, job: JobSpec) -> PreparedEnvironment | None:
        """The job's provisioned environment, or None when it runs in the worker's interpreter.

        Jobs naming no environment and no requirements skip the call.
        """
        if not (job.environment or job.requirements):
            return None
        state, log = self.state, self.state.log
        try:
            prepared = await self.calls.prepare(PrepareEnvironmentInput(
                environment=job.environment, requirements=job.requirements))
        except ActivityError as err:
            reason = f"the job's environment could not be prepared: {root_message(err)}"
            log.add("error", "error", agent="sandbox", status="environment_refused",
                    outputs={"reason": reason})
            raise Finish("failed", reason) from err
        state.provenance.environment = prepared
        log.add("tool_call", "complete", agent="sandbox", status="environment_ready",
                outputs={"environment": prepared.label(), "reused": prepared.reused,
                         "install_s": prepared.install_s, "packages": prepared.pins[:100]})
        return prepared if prepared.provisioned else None

    async def facts_of(self, name: str) -> EnvironmentFacts | None:
        """The packages of the named environment ``name``, prepared now.

        The job written for it then runs at once. None, the reason logged, when it cannot be
        prepared (the job's own preparation then ends the task with that reason) or is the
        worker's own interpreter.
        """
        try:
            prepared = await self.calls.prepare(PrepareEnvironmentInput(environment=name))
        except ActivityError as err:
            self.state.log.add("tool_call", "error", agent="sandbox", status="probe_failed",
                               outputs={"reason": root_message(err)})
            return None
        return environment_facts(prepared) if prepared.provisioned else None

    async def verify(self, job: JobSpec, outcome: ExecutionOutcome) -> Verification:
        """Check the evidence ``job`` left, and record the verdict."""
        self.state.bump(Phase.VERIFY)
        try:
            verification = await self.calls.verify(job, outcome)
        except ActivityError as err:
            raise Finish("failed", f"the evidence could not be checked: "
                                   f"{root_message(err)}") from err
        self.state.log.add("tool_call", "complete" if verification.passed else "error",
                           agent="verifier", status="pass" if verification.passed else "fail",
                           outputs={"summary": verification.summary,
                                    "missing": verification.missing})
        self.state.snapshot(Phase.VERIFY, verification.model_dump(mode="json"))
        return verification

    async def relink(self, missing: str) -> None:
        """Re-scan the job's working directory for misplaced evidence (nothing runs again)."""
        state = self.state
        assert state.job is not None and state.outcome is not None
        try:
            rescan = await self.calls.rescan(state.job, state.outcome)
        except ActivityError as err:
            raise Finish("failed_final", f"evidence missing ({missing}) and the re-scan "
                                         f"failed: {root_message(err)}") from err
        state.outcome = rescan.outcome
        state.log.add("tool_call", "complete", agent="verifier", status="rescanned",
                      outputs={"relinked": rescan.relinked, "still_missing": rescan.still_missing})

    async def environment(self) -> EnvironmentFacts | None:
        """The interpreter's Python and the job's packages; None if the probe failed.

        A job that ran in a provisioned environment is described by that environment's
        resolved packages (no probe: the sandbox's own interpreter is not the job's).
        """
        assert self.state.job is not None
        prepared = self.state.provenance.environment
        if prepared is not None and prepared.provisioned:
            return environment_facts(prepared)
        try:
            return relevant_facts(self.state.job, await self.calls.environment())
        except ActivityError as err:
            self.state.log.add("tool_call", "error", agent="sandbox", status="probe_failed",
                               outputs={"reason": root_message(err)})
            return None
