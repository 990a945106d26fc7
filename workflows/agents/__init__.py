"""Calling agent roles from workflows: role contracts, spend and budget, debugging choices.

``roles`` holds the roles' request and answer contracts (``drafts`` the planner's answer,
with a study's hypotheses) and ``spend`` usage and budgets (both re-exported here, as
:mod:`workflows.catalogue` declares the roles with them);
``calls.AgentCalls`` checks the budget, calls a role through its declaration and accounts
for it; ``debugging`` guards and chooses among the debuggers' fixes; ``planning`` turns a
planner's draft into a plan; ``reflector`` holds the reflector role's contracts.
"""

from workflows.agents.roles import AgentRequest, RoleAnswer
from workflows.agents.spend import Budget, ModelSpend, Spend, Usage

__all__ = [
    "AgentRequest",
    "Budget",
    "ModelSpend",
    "RoleAnswer",
    "Spend",
    "Usage",
]
