"""Calling agent roles from workflows: budgets checked, roles called, debuggers' fixes chosen.

``calls.AgentCalls`` checks the budget, calls a role through its declaration and accounts
for it; ``debugging`` guards and chooses among the debuggers' fixes; ``planning`` turns a
planner's draft into a plan. The roles' request and answer models (``roles``, ``drafts``,
``reflector``), spend and budgets (``spend``) and a goal's data files (``goal``) are
contracts, in :mod:`workflows.contracts`. Import the module you need: this package
re-exports nothing.
"""
