"""What a run hands a branch's workflow, and what the branch hands back.

Kept apart from ``branches`` (what people send and read) because both carry task results.
Pure models only.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.branches import BranchRecord, BranchStatus, TaskStart
from workflows.contracts.execution import EventScope
from workflows.contracts.goal import DataFile
from workflows.contracts.packing import PlanPacking
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.results import TaskResult
from workflows.contracts.spend import Budget


class BranchInput(PlanPacking):
    """Input of a BranchWorkflow: the branch's tasks, changed, and the results it reuses."""

    run_id: str
    plan_name: str
    plan_sha256: str
    record: BranchRecord
    plan: Plan
    """The branch's own tasks (the branch point and its downstream), with its changes."""
    order: list[str]
    reused: list[TaskResult] = Field(default_factory=list[TaskResult])
    """The upstream tasks' results: their verified artifacts are passed by reference."""
    start: TaskStart | None = None
    goal: str | None = None
    data: list[DataFile] = Field(default_factory=list[DataFile])
    policy: RunPolicy = Field(default_factory=RunPolicy)
    queues: Queues = Field(default_factory=Queues)
    budget: Budget | None = None
    parent_event: EventScope | None = None
    """The run's event that handed this branch over: the branch's events nest under it."""


class BranchResult(Model):
    """How a branch ended: its status and each of its tasks' (bounded) results."""

    name: str
    status: BranchStatus
    reason: str = ""
    tasks: list[TaskResult] = Field(default_factory=list[TaskResult])
