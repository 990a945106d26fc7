"""The skill library's workflow side: patterns, their contracts and formulas, the workflow.

``patterns`` says what a skill or subagent is, ``contracts`` what the library exchanges with
runs and its activities, ``formulas`` its scores and thresholds, ``subagents`` how a
subagent's recovery memory is chosen from and learns, ``workflow`` holds
``SkillLibraryWorkflow`` (imported from its module: it calls the catalogue, which declares
activities with these contracts); ``writing`` holds the skill writer's contracts and
``writer`` the workflow's calls of it. The library's activities are in :mod:`skills`.
Import the module you need: this package re-exports nothing, so importing ``patterns``
(which the roles' contracts do) does not load ``contracts`` and ``writing``, which import
the roles.
"""
