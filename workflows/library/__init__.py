"""The skill library's workflow side: patterns, their contracts and formulas, the workflow.

``patterns`` says what a skill or subagent is, ``contracts`` what the library exchanges with
runs and its activities, ``formulas`` its scores and thresholds, ``subagents`` how a
subagent's recovery memory is chosen from and learns, ``workflow`` holds
``SkillLibraryWorkflow`` (imported from its module: it calls the catalogue, which declares
activities with these contracts); ``writing`` holds the skill writer's contracts and
``writer`` the workflow's calls of it. The library's activities are in :mod:`skills`.
"""

from workflows.library.contracts import MatchAnswer, MatchInput, TaskOutcome
from workflows.library.patterns import Skill, SkillMetrics, SkillPattern

__all__ = [
    "MatchAnswer",
    "MatchInput",
    "Skill",
    "SkillMetrics",
    "SkillPattern",
    "TaskOutcome",
]
