"""TaskWorkflow: one task through the executive phases, as a durable state machine.

``phases`` holds the transition table every move is checked against.
"""


from workflows.task.phases import IllegalTransitionError, Phase
from workflows.task.workflow import TaskWorkflow

__all__ = [
    "IllegalTransitionError",
    "Phase",
    "TaskWorkflow",
]
