"""An ended study's answer from the study synthesizer, or why the deterministic one stands.

When a study ends, however it ends, and a cycle ran, the study synthesizer (a model role on the
writing tier) is asked for the study's answer from its concluded record. It is asked through
:class:`~workflows.agents.calls.AgentCalls` with the run policy's model budget, capped by what
is left of the study's own budget; its cost is added to what the study spent. No model, a
spent budget or no usable answer leave the deterministic synthesis of the report standing, with
the reason (the report says which synthesis it shows).
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.agents.calls import AgentCalls, AgentUnavailable, budget_for
    from workflows.catalogue import SYNTHESIZE_STUDY
    from workflows.common.events import EventLog
    from workflows.contracts.cycles import StudyInput, StudyStatus, SynthesisRequest
    from workflows.contracts.spend import Budget
    from workflows.contracts.study import StudyState
    from workflows.contracts.synthesis import StudySynthesis

ROLE = "study_synthesizer"


@dataclass(frozen=True)
class Synthesized:
    """The state with the synthesis's cost added, its answer, or why there is none."""

    state: StudyState
    synthesis: StudySynthesis | None = None
    note: str = ""


def _budget(inp: StudyInput, state: StudyState) -> Budget | None:
    """The run policy's model budget, capped by what is left of the study's budget."""
    budget = budget_for(inp.policy.agents)
    limit = state.policy.budget_usd
    if limit is None:
        return budget
    left = max(0.0, limit - state.spent_usd)
    if budget is None:
        return Budget(max_cost_usd=left)
    capped = left if budget.max_cost_usd is None else min(left, budget.max_cost_usd)
    return budget.model_copy(update={"max_cost_usd": capped})


async def synthesize(inp: StudyInput, state: StudyState, status: StudyStatus, reason: str,
                     log: EventLog) -> Synthesized:
    """Ask the study synthesizer for the ended study's answer (see the module's docstring)."""
    if state.cycles < 1:
        return Synthesized(state, note="no cycle ran")
    agents = AgentCalls(inp.policy.agents, inp.queues, log, _budget(inp, state))
    try:
        answer = await agents.call(SYNTHESIZE_STUDY, SynthesisRequest(
            run_id=state.study_id, state=state, status=status, reason=reason), role=ROLE)
    except AgentUnavailable as err:
        return Synthesized(state, note=err.reason)
    spent = state.spent_usd + answer.spend.usage.cost_usd
    return Synthesized(state.model_copy(update={"spent_usd": spent}), answer.synthesis)
