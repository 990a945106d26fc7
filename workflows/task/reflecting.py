"""The reflector's second opinion on a failure the rule table cannot name.

When reflection's note says ``unknown`` and offers no patch, and the run has a model, the
reflector role proposes a job-spec patch (arguments and resources only). Its note is
guarded and scored on the agents pool exactly as the rule table's are, so the workflow
treats it like any other note; a patch the guardrails refused is recorded as refused and
never applied. Without a model, or when the role gives no answer, the rule table's note
stands: nothing changes.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable
    from workflows.agents.reflector import ReflectRequest
    from workflows.catalogue import REFLECT_FAILURE
    from workflows.contracts.executive import DiagnoseInput, ReflectionNote
    from workflows.task.state import TaskState

GUARDRAIL = "guardrail: "


class Reflector:
    """Asks the reflector role about an unnamed failure.

    Args:
        state: the task's state (its log).
        agents: the task's role calls (model enabled, budget, recording).
    """

    def __init__(self, state: TaskState, agents: AgentCalls) -> None:
        self.state = state
        self.agents = agents

    def wanted(self, note: ReflectionNote) -> bool:
        """Whether the rule table left a rejection or a failed run unnamed and unpatched.

        A verification retry only re-links evidence, so a job-spec patch cannot serve it.
        """
        return (note.root_cause == "unknown" and note.patch is None
                and note.kind != "verification" and self.agents.enabled)

    async def second_opinion(self, failure: DiagnoseInput,
                             note: ReflectionNote) -> ReflectionNote | None:
        """The reflector's note on ``failure``, or None when it is not asked or gives none."""
        if not self.wanted(note):
            return None
        req = ReflectRequest(run_id=failure.run_id, task_id=failure.task_id,
                             failure=failure, note=note)
        try:
            answer = await self.agents.call(REFLECT_FAILURE, req, role="reflector")
        except AgentUnavailable:  # recorded by the call; the rule table's note stands
            return None
        mine = answer.note
        refused = [e.removeprefix(GUARDRAIL) for e in mine.evidence if e.startswith(GUARDRAIL)]
        if refused:
            self.state.log.add("tool_call", "error", agent="reflector", status="patch_refused",
                               outputs={"note_id": mine.note_id, "refused": refused})
        return mine
