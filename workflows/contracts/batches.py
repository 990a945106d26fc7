"""What a run hands each batch of its tasks, and what the batch hands back.

A run of over 1 000 tasks runs them in batches, each a child workflow
(``workflows.research.batches``). A batch's tasks, the results of the tasks outside it they
depend on, and its tasks' results coming back are packed (``workflows.contracts.packing``):
a batch of 500 results is some 2.5 MB of JSON, a tenth of that packed. Pure models only.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, TypeAdapter

from workflows.contracts.base import Model
from workflows.contracts.packing import pack, unpack
from workflows.contracts.patterns import GuidelineRef
from workflows.contracts.plan import Plan
from workflows.contracts.results import ResearchInput, TaskResult
from workflows.contracts.skills import SkillUse
from workflows.contracts.spend import Budget

_RESULTS = TypeAdapter(list[TaskResult], config=ConfigDict(defer_build=True))


class BatchInput(Model):
    """Input of a TaskBatchWorkflow: its tasks and what they need from the run."""

    number: int
    """The batch's place in the run, from 1 (its workflow ID is ``RUN.batch-NNNN``)."""
    run: ResearchInput
    """The run's input without its plan (policy, queues, goal, data, study, earlier)."""
    plan: str
    """This batch's tasks as a plan (the run's plan with only their decisions), packed."""
    order: list[str]
    reused: str = ""
    """The results of the tasks outside the batch that its tasks depend on, packed."""
    budget: Budget | None = None
    skill_uses: dict[str, SkillUse] = Field(default_factory=dict[str, SkillUse])
    guidelines: dict[str, list[GuidelineRef]] = Field(
        default_factory=dict[str, list[GuidelineRef]])
    planned_with: list[str] = Field(default_factory=list[str])
    wanted: list[str] = Field(default_factory=list[str])
    """The metrics a task's digest of its dependencies keeps first (the whole plan's)."""

    def the_plan(self) -> Plan:
        """This batch's tasks as a plan."""
        return Plan.model_validate(unpack(self.plan))

    def reused_results(self) -> list[TaskResult]:
        """The results of the tasks outside the batch its tasks depend on."""
        return results_of(unpack(self.reused)) if self.reused else []


class BatchResult(Model):
    """How a batch's tasks ended: each one's bounded result, packed."""

    number: int
    tasks: str
    memory_misses: int = 0
    """How often memory gave no answer to the batch (it consults memory for its tasks)."""
    memory_warnings: list[str] = Field(default_factory=list[str])

    def results(self) -> list[TaskResult]:
        """Each task's bounded result, in the batch's order."""
        return results_of(self.raw())

    def raw(self) -> list[Any]:
        """Each task's result as JSON-ready data, to decode a part at a time."""
        return unpack(self.tasks)


def dump_results(results: list[TaskResult]) -> list[Any]:
    """``results`` as JSON-ready data, their unset fields left out (less to send and read)."""
    return _RESULTS.dump_python(results, mode="json", exclude_defaults=True)


def results_of(raw: list[Any]) -> list[TaskResult]:
    """The results :func:`dump_results` dumped."""
    return _RESULTS.validate_python(raw)


def pack_results(results: list[TaskResult]) -> str:
    """``results`` packed, for a :class:`BatchInput` or :class:`BatchResult`."""
    return pack(dump_results(results))


def pack_plan(plan: Plan) -> str:
    """``plan`` packed, for a :class:`BatchInput`."""
    return pack(plan.model_dump(mode="json"))
