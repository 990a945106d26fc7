"""Agent roles: the model-backed planner, coder, reviewers, debuggers, reflector, output processor.

Each role turns a typed request into a prompt (``prompting``, ``render``, system prompts in
``prompts/*.md``), asks the model gateway for a structured answer and converts it back into
Assay's contracts (``convert``); ``roles.Agents`` holds the role activities, and
``writer.SkillWriter`` the skill writer's (its prompts and answer checks in ``writing``).
``guidance`` puts guideline skills into a role's prompt within its budget; ``reflector``
builds the reflector's message and turns its answer into a reflection note.
"""


from activities.agents.roles import Agents

__all__ = [
    "Agents",
]
