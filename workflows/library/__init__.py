"""The skill library's workflow side: its formulas, a subagent's memory, the workflow.

``formulas`` holds its scores and thresholds, ``subagents`` how a subagent's recovery memory
is chosen from and learns, ``workflow`` holds ``SkillLibraryWorkflow`` and ``writer`` the
workflow's calls of the skill writer. What a skill or subagent is and what the library
exchanges with runs and its activities are contracts (:mod:`workflows.contracts.patterns`,
``skills``, ``writing``, ``subagents``). The library's activities are in :mod:`skills`.
Import the module you need: this package re-exports nothing.
"""
