"""Intake: reading plan files, goals with their data, and run policies before a run starts.

Everything here refuses bad input with a message that says what and where; nothing starts
until intake has accepted the request.
"""


from workers.intake.goalfile import GoalError, load_goal
from workers.intake.planfile import PlanFileError, load_plan, load_supplied_plan
from workers.intake.runpolicy import PolicyError, build_policy

__all__ = [
    "GoalError",
    "PlanFileError",
    "PolicyError",
    "build_policy",
    "load_goal",
    "load_plan",
    "load_supplied_plan",
]
