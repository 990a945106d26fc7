"""ResearchWorkflow: one research goal or plan through intake, planning, tasks and report.

``planning`` plans a goal (person or planner), ``memory`` and ``skills`` consult the learning
pools at intake.
"""


from workflows.research.workflow import ResearchWorkflow

__all__ = [
    "ResearchWorkflow",
]
