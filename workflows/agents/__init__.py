"""Calling agent roles from workflows: role contracts, spend and budget, debugging choices.

``roles`` holds the roles' request and answer contracts (``drafts`` the planner's answer,
with a study's hypotheses; ``goal`` a goal's data files and its run's answer, which results
carry), ``spend`` usage and budgets; import the module you need, as this package re-exports
nothing;
``calls.AgentCalls`` checks the budget, calls a role through its declaration and accounts
for it; ``debugging`` guards and chooses among the debuggers' fixes; ``planning`` turns a
planner's draft into a plan; ``reflector`` holds the reflector role's contracts.
"""
