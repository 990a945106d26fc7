"""Calling agent roles from a workflow: budget first, then the activity, then the accounting.

Every role call goes through :class:`AgentCalls`: it refuses to start once the run's model
budget is spent, sends the budget left and the run's recording with the request, adds what the
call spent (even a failed one) to the workflow's :class:`ModelSpend`, and records an
``agent_call`` event with the tokens and cost. A role that cannot answer (no model, budget
spent, replay miss, invalid answers) raises :class:`AgentUnavailable` with the reason, so the
caller can fall back to its deterministic path or end the task with that reason.
"""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from workflows.catalogue import ActivityDecl
    from workflows.common.events import EventLog
    from workflows.common.failures import root_message
    from workflows.contracts.policy import AgentsPolicy, Queues
    from workflows.contracts.roles import AgentRequest, RoleAnswer
    from workflows.contracts.spend import Budget, ModelSpend, Spend, Usage

AnswerT = TypeVar("AnswerT", bound=RoleAnswer)


class AgentUnavailable(Exception):  # control flow: the role gave no answer
    """A role gave no answer; ``reason`` says why, ``budget`` if the budget ran out."""

    def __init__(self, reason: str, *, budget: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.budget = budget


def budget_for(policy: AgentsPolicy, spent: Usage | None = None) -> Budget | None:
    """The run's budget with ``spent`` already used; None when the policy sets no limit."""
    if policy.budget_tokens is None and policy.budget_usd is None:
        return None
    return Budget(max_tokens=policy.budget_tokens, max_cost_usd=policy.budget_usd,
                  spent=spent or Usage())


class AgentCalls:
    """Role calls of one workflow, with its budget and running spend.

    Args:
        policy: the run's agents policy (enabled, limits, recording).
        queues: the run's task queues (roles run on the agents pool's).
        log: the workflow's event log.
        budget: the budget as it stood when this workflow started (None: unlimited).
    """

    def __init__(self, policy: AgentsPolicy, queues: Queues, log: EventLog,
                 budget: Budget | None) -> None:
        self.policy = policy
        self.queues = queues
        self.log = log
        self.base = budget
        self.spend = ModelSpend()
        self.guided: list[str] = []
        """Guideline skills that went into this workflow's prompts, first use first."""

    @property
    def enabled(self) -> bool:
        """Whether a model is available to this run at all."""
        return self.policy.enabled

    def budget(self) -> Budget | None:
        """The budget left now: the starting budget less what this workflow has spent."""
        return self.base.add(self.spend.usage) if self.base is not None else None

    def exhausted(self) -> str | None:
        """Why no further call may start (budget spent), or None."""
        budget = self.budget()
        return budget.exhausted_by() if budget is not None else None

    def charge(self, spend: ModelSpend) -> None:
        """Add spend made elsewhere (a child task) to this workflow's total."""
        self.spend = self.spend.merge(spend)

    async def call(self, activity: ActivityDecl[Any, AnswerT], req: AgentRequest, *,
                   role: str) -> AnswerT:
        """Run one role activity and account for it; :class:`AgentUnavailable` if it can't."""
        if not self.enabled:
            raise AgentUnavailable(
                "no model is configured for the agents (no API key on the agents workers and "
                "no replay recording)")
        spent = self.exhausted()
        if spent:
            reason = f"model budget exhausted: {spent}"
            self.log.add("agent_call", "error", agent=role, status="budget_exhausted",
                         outputs={"reason": reason})
            raise AgentUnavailable(reason, budget=True)
        req = req.model_copy(update={"budget": self.budget(),
                                     "recording": self.policy.recording})
        try:
            answer = await activity.run(
                req, queues=self.queues,
                summary=f"model call: {role} ({self.log.node_id})")
        except ActivityError as err:
            raise self._failed(err, role) from err
        spend = answer.spend
        self.spend = self.spend.add(spend)
        guided = {"guidelines": answer.guidelines} if answer.guidelines else {}
        self.guided += [g for g in answer.guidelines if g not in self.guided]
        self.log.add("agent_call", "complete", agent=role, status="answered",
                     outputs={**_spend_fields(spend), **guided})
        return answer

    def _failed(self, err: ActivityError, role: str) -> AgentUnavailable:
        cause = err.cause
        kind = cause.type if isinstance(cause, ApplicationError) else None
        usage = _failure_usage(cause)
        if usage is not None:
            self.spend = self.spend.add(Spend(role=role, calls=1, usage=usage))
        reason = f"the {role} gave no answer: {root_message(err)}"
        self.log.add("agent_call", "error", agent=role, status=kind or "failed",
                     outputs={"reason": reason,
                              **({"usage": usage.model_dump(mode="json")} if usage else {})})
        return AgentUnavailable(reason, budget=kind == "BudgetExhausted")


def _failure_usage(cause: BaseException | None) -> Usage | None:
    """What a failed call spent, from its error details (the gateway puts it there)."""
    if not isinstance(cause, ApplicationError) or not cause.details:
        return None
    details: Any = cause.details[0]
    if not isinstance(details, dict) or "usage" not in details:
        return None
    try:
        usage = Usage.model_validate(details["usage"])
    except ValidationError:
        return None
    return usage if usage.total_tokens or usage.cost_usd else None


def _spend_fields(spend: Spend) -> dict[str, Any]:
    """An agent call's spend as event outputs."""
    usage = spend.usage
    return {"model": spend.model, "calls": spend.calls, "repairs": spend.repairs,
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cost_usd": round(usage.cost_usd, 6), "exchange_ids": spend.exchange_ids,
            "replayed": spend.replayed}
