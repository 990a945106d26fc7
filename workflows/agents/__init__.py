"""Calling agent roles from workflows: role contracts, spend and budget, debugging choices.

``calls.AgentCalls`` checks the budget, calls a role and accounts for it; ``roles`` holds
the roles' request and answer contracts; ``spend`` usage and budgets; ``debugging`` guards and
chooses among the debuggers' fixes; ``planning`` turns a planner's draft into a plan.
"""


from workflows.agents.calls import AgentCalls, AgentUnavailable

__all__ = [
    "AgentCalls",
    "AgentUnavailable",
]
