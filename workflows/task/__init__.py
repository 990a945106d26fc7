"""TaskWorkflow: one task through the executive phases, as a durable state machine.

``phases`` holds the transition table every move is checked against (re-exported here);
``workflow`` the workflow class with its handlers and pipeline, imported from its module.
Its steps are plain collaborators, each given the task's ``state.TaskState``: ``review``,
``execution``, ``recovery`` (with ``subagent``: a subagent's remembered fixes, tried
first; ``reflecting``, the reflector's second opinion), ``coding`` and ``debugging``;
``tiering`` the pure rules that make a task light or full; ``memory`` and ``skills`` hand
the finished task to the learning pools; ``report`` writes its whole result and cuts the one
it returns to fit; ``calls`` holds its activity calls.
"""

from workflows.task.phases import IllegalTransitionError, Phase, check_transition

__all__ = [
    "IllegalTransitionError",
    "Phase",
    "check_transition",
]
