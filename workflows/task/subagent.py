"""A task run as a subagent: its remembered fixes, tried on a failed run before the rule table.

A task whose job came from a subagent pattern (``TaskInput.skill`` of kind ``subagent``)
carries the subagent's id, instructions and recovery memory. When its run fails, the next
remembered fix that applies to the failing job (``workflows.library.subagents.next_fix``) is
sealed as a patch and held to the same guardrails as reflection's (``check_patch``): a fix
the guard refuses is recorded and the next one tried; once the memory has nothing left,
reflection's rule table is asked as for any task. Every try is in the provenance's patches
and the events, and what came of it goes to the library with the task's outcome.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.common.guard import check_patch
    from workflows.common.patching import PatchError, apply_patch, sealed
    from workflows.contracts.execution import ExecutionOutcome
    from workflows.contracts.executive import Patch, PatchChange
    from workflows.contracts.plan import JobSpec
    from workflows.library.contracts import SkillUse
    from workflows.library.subagents import MemoryTry, fix_key, next_fix
    from workflows.task.state import TaskState

MEMORY_CONFIDENCE = 0.85
"""A remembered fix's confidence by the reflection formula: 0.50 base, +0.20 proven fix,
+0.15 minimal patch (one change) — the ``retry`` threshold."""
MEMORY_RISK = 0.0
"""Its risk: 0.05 for one change, -0.20 for a proven fix, +0.30 x 0.15, clamped at 0."""


class SubagentMemory:
    """The remembered fixes of the subagent a task runs as, and the task's tries of them.

    Args:
        state: the task's state (its job, policy, provenance and event log).
    """

    def __init__(self, state: TaskState) -> None:
        self.state = state
        self.tries = state.memory_tries

    @property
    def subagent(self) -> SkillUse | None:
        """The subagent this task runs as, if any."""
        use = self.state.task.skill
        return use if use is not None and use.subagent else None

    def has_memory(self) -> bool:
        """Whether a failed run tries remembered fixes first."""
        use = self.subagent
        return use is not None and bool(use.recovery)

    def next_job(self, root_cause: str) -> JobSpec | None:
        """The job patched by the next remembered fix that applies and passes the guard.

        Each refused fix is recorded and the next tried; ``None`` when none is left.
        """
        use, state = self.subagent, self.state
        assert use is not None and state.job is not None
        while (found := next_fix(use.recovery, state.job, self._tried())) is not None:
            fix, change = found
            patch = self._patch(root_cause, change)
            try:
                job = apply_patch(state.job, patch)
                refused = check_patch(state.job, job, state.task.policy.review)
            except PatchError as err:
                job, refused = None, [str(err)]
            record = state.record_patch(patch, "retry")
            attempt = MemoryTry(fix=fix, change=change, patch_id=patch.patch_id)
            if job is None or refused:
                attempt.result, attempt.reason = "refused", "; ".join(refused)
                record.outcome = f"refused: {attempt.reason}"
                state.patches.remove(patch)  # it never ran: no identical retry to avoid
            else:
                record.outcome = "applied"
            self.tries.append(attempt)
            self._log(use, attempt)
            if attempt.result == "applied":
                return job
        return None

    def ran(self, outcome: ExecutionOutcome) -> None:
        """Judge the fix applied last by the run that followed it."""
        if self.tries and self.tries[-1].result == "applied":
            self.tries[-1].result = "cured" if outcome.outcome == "succeeded" else "failed"

    def _tried(self) -> set[str]:
        return {fix_key(t.fix) for t in self.tries}

    def _patch(self, root_cause: str, change: PatchChange) -> Patch:
        state = self.state
        return sealed(Patch(
            patch_id=f"memory-{state.task.scope()}-{len(self.tries) + 1}",
            task_id=state.task.decision.task_id, root_cause=root_cause, changes=[change],
            confidence=MEMORY_CONFIDENCE, risk=MEMORY_RISK))

    def _log(self, use: SkillUse, attempt: MemoryTry) -> None:
        applied = attempt.result == "applied"
        self.state.log.add(
            "tool_call", "complete" if applied else "error", agent=f"subagent:{use.name}",
            status="patched" if applied else "refused",
            outputs={"subagent": use.skill_id, "patch_id": attempt.patch_id,
                     "fix": attempt.fix.model_dump(mode="json"),
                     "change": attempt.change.model_dump(mode="json") if attempt.change
                     else None, "refused": attempt.reason})
